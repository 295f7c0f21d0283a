package io.flashsale.api.tasks;

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
    chain.doFilter(request, response instanceof HttpServletResponse http ? new Answer(http) : response);
  }

  /** The task's output, which can also set the response's status. */
  public static final class StatusWriter extends PrintWriter {
    private final IntConsumer status;

    public StatusWriter(Writer out, IntConsumer status) {
      super(out);
      this.status = status;
    }

    /** An error answer: this status, a problem detail body. */
    void status(int code) {
      status.accept(code);
    }
  }

  private static final class Answer extends HttpServletResponseWrapper {
    private StatusWriter writer;

    Answer(HttpServletResponse response) {
      super(response);
    }

    @Override
    public PrintWriter getWriter() throws IOException {
      if (writer == null) {
        writer = new StatusWriter(super.getWriter(), code -> {
          setStatus(code);
          setContentType(io.flashsale.problem.Problem.MEDIA_TYPE);
        });
      }
      return writer;
    }
  }
}
