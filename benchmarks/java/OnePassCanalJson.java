package cdc.bench;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;

/**
 * One pass over a Canal-JSON message in the JVM: its envelope and its rows parsed with Jackson's streaming parser
 * and every value typed by its column's {@code mysqlType}, into arrays of typed values (one per Spark type).
 *
 * <p>The cost floor of a decoder that parses and types in one pass, for bench_java_one_pass.py: it follows none of
 * the codecs' rules (ranges, zero dates, zones, ENUM and SET names, binary text) and keeps no column names.
 */
public final class OnePassCanalJson implements UDF1<String, Row> {
  private static final long serialVersionUID = 1L;

  private static final DateTimeFormatter DATETIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss[.SSSSSS][.SSS][.S]");

  @Override
  public Row call(String text) throws IOException {
    Envelope envelope = new Envelope();
    CanalJsonFields.read(text, envelope::read);
    Typed typed = new Typed();
    for (Map<String, String> row : envelope.rows) {
      row.forEach((column, value) -> typed.add(envelope.types.getOrDefault(column, "varchar"), value));
    }
    return RowFactory.create(
        envelope.database, envelope.table, envelope.type, envelope.ts, envelope.rows.size(), typed.bad,
        typed.integers, typed.decimals, typed.doubles, typed.texts, typed.dates, typed.datetimes);
  }

  /** What the pass reads of the envelope: the table, type and ts, the type map and the rows as texts. */
  private static final class Envelope extends CanalJsonFields.Head {
    final Map<String, String> types = new HashMap<>();
    final List<Map<String, String>> rows = new ArrayList<>();

    void read(String field, JsonToken token, JsonParser parser) throws IOException {
      if (readHead(field, parser)) {
        return;
      }
      switch (field) {
        case "mysqlType" -> readObject(parser, token, types);
        case "data" -> {
          if (token == JsonToken.START_ARRAY) {
            while (parser.nextToken() == JsonToken.START_OBJECT) {
              Map<String, String> row = new HashMap<>();
              readObject(parser, JsonToken.START_OBJECT, row);
              rows.add(row);
            }
          }
        }
        default -> parser.skipChildren();
      }
    }
  }

  /** The members of the object the parser is at, as texts (null for JSON null). */
  private static void readObject(JsonParser parser, JsonToken at, Map<String, String> into) throws IOException {
    if (at != JsonToken.START_OBJECT) {
      return;
    }
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      String name = parser.currentName();
      into.put(name, parser.nextToken() == JsonToken.VALUE_NULL ? null : parser.getText());
    }
  }

  /** Values typed by their MySQL type name, in one list per Spark type; {@code bad} counts texts that did not. */
  private static final class Typed {
    final List<Long> integers = new ArrayList<>();
    final List<BigDecimal> decimals = new ArrayList<>();
    final List<Double> doubles = new ArrayList<>();
    final List<String> texts = new ArrayList<>();
    final List<LocalDate> dates = new ArrayList<>();
    final List<LocalDateTime> datetimes = new ArrayList<>();
    int bad;

    void add(String mysqlType, String value) {
      if (value == null) {
        return;
      }
      try {
        if (mysqlType.contains("int") || mysqlType.equals("year")) {
          integers.add(Long.parseLong(value));
        } else if (mysqlType.startsWith("decimal")) {
          decimals.add(new BigDecimal(value).setScale(10));
        } else if (mysqlType.startsWith("double") || mysqlType.startsWith("float")) {
          doubles.add(Double.parseDouble(value));
        } else if (mysqlType.startsWith("datetime") || mysqlType.startsWith("timestamp")) {
          datetimes.add(LocalDateTime.parse(value, DATETIME));
        } else if (mysqlType.equals("date")) {
          dates.add(LocalDate.parse(value));
        } else {
          texts.add(value);
        }
      } catch (RuntimeException notOfItsType) {
        bad++;
      }
    }
  }
}
