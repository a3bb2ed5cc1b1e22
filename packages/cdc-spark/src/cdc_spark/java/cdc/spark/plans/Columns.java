package cdc.spark.plans;

import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.types.DataType;
import scala.collection.immutable.Seq;

/** Where a plan's output has the one column of a name that the project's Java code reads by position. */
public final class Columns {
  private Columns() {}

  /**
   * The position of the one column of {@code output} named {@code name}, and of {@code type} where that is not null;
   * -1 where there is none or more than one (neither is the column the caller means: it then takes its other way).
   */
  public static int only(Seq<Attribute> output, String name, DataType type) {
    int found = -1;
    for (int i = 0; i < output.size(); i++) {
      Attribute column = output.apply(i);
      if (column.name().equals(name) && (type == null || column.dataType().equals(type))) {
        if (found >= 0) {
          return -1;
        }
        found = i;
      }
    }
    return found;
  }
}
