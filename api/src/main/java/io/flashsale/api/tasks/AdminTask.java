package io.flashsale.api.tasks;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.dropwizard.servlets.tasks.Task;
import io.flashsale.problem.Problem;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An admin task whose refusals are problem details (RFC 9457) with a stable code and a 4xx status. Dropwizard's
 * TaskServlet answers 500 with the exception's message for anything a task throws, so a task
 * does not throw: it answers the error through {@link TaskErrors.StatusWriter}, which the
 * {@link TaskErrors} filter hands to the servlet. Output is buffered until the task is done, so an
 * error never follows half a report. Unexpected failures are a 500 INTERNAL with an id; the
 * details go to the log only.
 */
public abstract class AdminTask extends Task {
  private static final Logger log = LoggerFactory.getLogger(AdminTask.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private final Set<String> parameters;

  protected AdminTask(String name, Set<String> parameters) {
    super(name);
    this.parameters = parameters;
  }

  protected abstract void run(TaskParams params, PrintWriter out) throws Exception;

  /** The status of a task's success: 200, or e.g. 202 for a task that hands its work on. */
  protected int successStatus() {
    return 200;
  }

  @Override
  public final void execute(Map<String, List<String>> params, PrintWriter out) throws Exception {
    StringWriter buffer = new StringWriter();
    try (PrintWriter w = new PrintWriter(buffer)) {
      run(new TaskParams(params, parameters), w);
    } catch (TaskError e) {
      if (!(out instanceof TaskErrors.StatusWriter answer)) throw e;
      answer.status(e.status());
      out.println(JSON.writeValueAsString(problem(e.status(), e.code(), e.getMessage(), e.parameter())));
      return;
    } catch (Exception e) {
      if (!(out instanceof TaskErrors.StatusWriter answer)) throw e;
      String id = UUID.randomUUID().toString().substring(0, 8);
      log.error("task {} failed (error id {})", getName(), id, e);
      answer.status(500);
      out.println(JSON.writeValueAsString(problem(500, "INTERNAL", "internal error, id " + id, null)));
      return;
    }
    if (successStatus() != 200 && out instanceof TaskErrors.StatusWriter answer) answer.successStatus(successStatus());
    out.print(buffer);
  }

  static Problem problem(int status, String code, String message, String parameter) {
    return Problem.ofParameter(status, code, message, parameter);
  }
}
