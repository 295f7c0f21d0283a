package io.flashsale.persistence;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/** Which database errors are worth a retry. */
class DatabaseErrorsTest {
  @Test
  void dataErrorsAreClasses22And23() {
    for (String state : new String[] {"22001", "22003", "22P02", "23505", "23514", "23503"}) {
      assertInstanceOf(Database.DataError.class, Database.classify(new SQLException("x", state)), state);
    }
  }

  @Test
  void connectionAndSerializationErrorsAreTransient() {
    for (String state : new String[] {"08006", "08001", "40001", "40P01", "57P01", "53300", null}) {
      Database.DatabaseException e = Database.classify(new SQLException("x", state));
      assertFalse(e instanceof Database.DataError, String.valueOf(state));
    }
  }
}
