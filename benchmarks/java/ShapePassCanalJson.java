package cdc.bench;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;

/**
 * The shape pass over a Canal-JSON message in the JVM: its table, type and commit ts, and one hash of its type maps
 * and key names (what a shape is), with the rows skipped by Jackson's streaming parser, not read.
 *
 * <p>For bench_java_one_pass.py: what the first of a two-pass decoder's passes costs when it reads no value.
 */
public final class ShapePassCanalJson implements UDF1<String, Row> {
  private static final long serialVersionUID = 1L;

  @Override
  public Row call(String text) throws IOException {
    Shape shape = new Shape();
    CanalJsonFields.read(text, shape::read);
    return RowFactory.create(shape.database, shape.table, shape.type, shape.ts, shape.hash);
  }

  /** What the pass reads: the table, type and ts, and the hash of the type maps and key names. */
  private static final class Shape extends CanalJsonFields.Head {
    long hash = 17;

    void read(String field, JsonToken token, JsonParser parser) throws IOException {
      if (readHead(field, parser)) {
        return;
      }
      switch (field) {
        case "mysqlType", "sqlType", "pkNames" -> hash = hashed(parser, token, hash * 31 + field.hashCode());
        default -> parser.skipChildren();
      }
    }
  }

  /** {@code hash} carried over every name and scalar of the value the parser is at (an object, array or scalar). */
  private static long hashed(JsonParser parser, JsonToken at, long hash) throws IOException {
    int depth = at.isStructStart() ? 1 : 0;
    long carried = depth == 0 ? hash * 31 + parser.getText().hashCode() : hash * 31 + at.id();
    while (depth > 0) {
      JsonToken token = parser.nextToken();
      if (token.isStructStart()) {
        depth++;
      } else if (token.isStructEnd()) {
        depth--;
      }
      carried = carried * 31 + (token.isScalarValue() || token == JsonToken.FIELD_NAME
          ? parser.getText().hashCode() : token.id());
    }
    return carried;
  }
}
