package cdc.bench;

import com.fasterxml.jackson.core.JsonFactory;
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
  private static final JsonFactory JSON = new JsonFactory();
  private static final DateTimeFormatter DATETIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss[.SSSSSS][.SSS][.S]");

  @Override
  public Row call(String text) throws IOException {
    String database = null;
    String table = null;
    String type = null;
    long ts = 0;
    Map<String, String> types = new HashMap<>();
    List<Map<String, String>> rows = new ArrayList<>();
    try (JsonParser parser = JSON.createParser(text)) {
      parser.nextToken();
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String field = parser.currentName();
        JsonToken token = parser.nextToken();
        switch (field) {
          case "database" -> database = parser.getText();
          case "table" -> table = parser.getText();
          case "type" -> type = parser.getText();
          case "ts" -> ts = parser.getLongValue();
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
    Typed typed = new Typed();
    for (Map<String, String> row : rows) {
      row.forEach((column, value) -> typed.add(types.getOrDefault(column, "varchar"), value));
    }
    return RowFactory.create(
        database, table, type, ts, rows.size(), typed.bad,
        typed.integers, typed.decimals, typed.doubles, typed.texts, typed.dates, typed.datetimes);
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
