package io.flashsale.api.tasks;

import io.flashsale.api.core.ErrorMappers;
import io.flashsale.problem.Problem;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.util.function.IntConsumer;

/**
 * Filter on the admin context's /tasks/*: the writer the TaskServlet gets from the response is a
 * {@link StatusWriter}, through which an {@link AdminTask} sets its error status and the problem detail type.
 */
public final class TaskErrors implements Filter {
  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    if (!(response instanceof HttpServletResponse http)) {
      chain.doFilter(request, response);
      return;
    }
    Answer answer = new Answer(http);
    chain.doFilter(request, answer);
    answer.problemIfBodiless();
  }

  /** The task's output, which can also set the response's status. */
  public static final class StatusWriter extends PrintWriter {
    private final IntConsumer status;
    private final IntConsumer successStatus;

    public StatusWriter(Writer out, IntConsumer status) {
      this(out, status, code -> { });
    }

    public StatusWriter(Writer out, IntConsumer status, IntConsumer successStatus) {
      super(out);
      this.status = status;
      this.successStatus = successStatus;
    }

    /** A success other than 200 (202 for work handed on), with the task's own body. */
    void successStatus(int code) {
      successStatus.accept(code);
    }

    /** An error answer: this status, a problem detail body. */
    void status(int code) {
      status.accept(code);
    }
  }

  private static final class Answer extends HttpServletResponseWrapper {
    private StatusWriter writer;
    private boolean streamed;

    Answer(HttpServletResponse response) {
      super(response);
    }

    @Override
    public jakarta.servlet.ServletOutputStream getOutputStream() throws IOException {
      streamed = true;
      return super.getOutputStream();
    }

    /**
     * The TaskServlet answers an unknown task (404) and a method other than POST (405) with a
     * status and no body: those become problem details too.
     */
    void problemIfBodiless() throws IOException {
      int status = getStatus();
      if (status < 400 || writer != null || streamed || isCommitted()) return;
      if (status == 405) setHeader("Allow", "POST");
      setContentType(Problem.MEDIA_TYPE);
      byte[] body = Problem.of(status, ErrorMappers.WebErrors.codeFor(status), Problem.reasonPhrase(status)).toJson();
      setContentLength(body.length);
      getResponse().getOutputStream().write(body);
    }

    @Override
    public PrintWriter getWriter() throws IOException {
      if (writer == null) {
        writer = new StatusWriter(super.getWriter(), code -> {
          setStatus(code);
          setContentType(Problem.MEDIA_TYPE);
        }, this::setStatus);
      }
      return writer;
    }
  }
}
