package cdc.spark.canal;

import cdc.spark.rows.Members;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;

/**
 * What the decode needs to know of a Canal-JSON message before typing it, read in one streaming pass without keeping
 * its rows: {@code struct<kind, database, table, shape, commit_ts, watermark_ts, rows>}.
 *
 * <p>{@code kind} is {@code row} for a row message the JVM may type (the rules of {@code cdc_spark.decoding.canal}:
 * a row type, not DDL, key names given, a database and a table, at least one row, every row naming the same columns
 * in the same order, an update's old rows as many and naming only those columns, no handle-key-only or claim-check
 * row, a commit ts within a long), {@code watermark} for a watermark with its ts, null for anything else (the
 * codec's). It is stricter than Spark's {@code from_json}: a member of another JSON type than Canal writes, a
 * duplicate member or text after the document makes the message the codec's. {@code shape} is a digest of what
 * the codec's schema comes from: the first row's column names, both type maps and the key names, in order.
 */
public final class CanalShape implements UDF1<byte[], Row> {
  private static final long serialVersionUID = 1L;
  private static final Row NOTHING = RowFactory.create(null, null, null, null, null, null, null);

  @Override
  public Row call(byte[] text) {
    if (text == null) {
      return NOTHING;
    }
    Envelope envelope = new Envelope();
    try {
      boolean wellFormed = Members.read(text, envelope::read, true); // read before odd is (|= would not)
      envelope.odd |= !wellFormed;
    } catch (IOException | RuntimeException malformed) {
      return NOTHING;
    }
    return envelope.result();
  }

  /** The members the decode reads; {@code odd}: something the JVM must not type. */
  private static final class Envelope {
    String database;
    String table;
    String type;
    boolean pkNames;
    Boolean isDdl;
    boolean ddlGiven;
    List<String> keys;
    int rows = -1;
    boolean sameKeys = true;
    List<Set<String>> oldKeys;
    boolean oldGiven;
    boolean odd;
    Long commitTs;
    boolean commitTsBad;
    Long watermarkTs;
    boolean onlyHandleKey;
    boolean claimCheck;
    final Digest digest = new Digest();
    List<String> mysqlType; // null: not given (or null)
    List<String> sqlType;
    final List<String> keyNames = new ArrayList<>();

    void read(String field, JsonToken token, JsonParser parser) throws IOException {
      switch (field) {
        case "database" -> database = string(token, parser);
        case "table" -> table = string(token, parser);
        case "type" -> type = string(token, parser);
        case "isDdl" -> {
          ddlGiven = true;
          isDdl = token == JsonToken.VALUE_TRUE ? Boolean.TRUE : token == JsonToken.VALUE_FALSE ? Boolean.FALSE : null;
          if (isDdl == null) {
            parser.skipChildren();
          }
        }
        case "pkNames" -> {
          pkNames = true;
          if (token == JsonToken.START_ARRAY) {
            JsonToken name;
            while ((name = parser.nextToken()) == JsonToken.VALUE_STRING) {
              keyNames.add(parser.getText());
            }
            if (name != JsonToken.END_ARRAY) {
              throw new IOException("key names that are not strings");
            }
          } else {
            odd |= token != JsonToken.VALUE_NULL;
            parser.skipChildren();
          }
        }
        case "mysqlType" -> mysqlType = typeMap(token, parser, JsonToken.VALUE_STRING);
        case "sqlType" -> sqlType = typeMap(token, parser, JsonToken.VALUE_NUMBER_INT);
        case "data" -> data(token, parser);
        case "old" -> old(token, parser);
        case "_tidb" -> tidb(token, parser);
        default -> parser.skipChildren();
      }
    }

    private String string(JsonToken token, JsonParser parser) throws IOException {
      if (token == JsonToken.VALUE_STRING) {
        return parser.getText();
      }
      odd |= token != JsonToken.VALUE_NULL;
      parser.skipChildren();
      return null;
    }

    /** A type map's names and values in turn (null for JSON null). */
    private List<String> typeMap(JsonToken token, JsonParser parser, JsonToken valueToken) throws IOException {
      if (token != JsonToken.START_OBJECT) {
        odd |= token != JsonToken.VALUE_NULL;
        parser.skipChildren();
        return null;
      }
      List<String> into = new ArrayList<>();
      Set<String> names = new HashSet<>();
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String name = parser.currentName();
        odd |= !names.add(name);
        JsonToken value = parser.nextToken();
        odd |= value != valueToken;
        parser.skipChildren();
        into.add(name);
        into.add(value == valueToken ? parser.getText() : "");
      }
      return into;
    }

    private void data(JsonToken token, JsonParser parser) throws IOException {
      if (token != JsonToken.START_ARRAY) {
        odd |= token != JsonToken.VALUE_NULL;
        parser.skipChildren();
        return;
      }
      rows = 0;
      JsonToken row;
      while ((row = parser.nextToken()) != JsonToken.END_ARRAY) {
        List<String> names = rowKeys(row, parser);
        if (names == null) {
          sameKeys = false;
        } else if (keys == null) {
          keys = names;
        } else {
          sameKeys &= keys.equals(names);
        }
        rows++;
      }
    }

    private void old(JsonToken token, JsonParser parser) throws IOException {
      oldGiven = token != JsonToken.VALUE_NULL;
      if (token != JsonToken.START_ARRAY) {
        odd |= oldGiven;
        parser.skipChildren();
        return;
      }
      oldKeys = new ArrayList<>();
      JsonToken row;
      while ((row = parser.nextToken()) != JsonToken.END_ARRAY) {
        List<String> names = rowKeys(row, parser);
        oldKeys.add(names == null ? null : new HashSet<>(names));
      }
    }

    /** A row's column names in order; null for a null row. Values must be strings, numbers, booleans or null. */
    private List<String> rowKeys(JsonToken row, JsonParser parser) throws IOException {
      if (row != JsonToken.START_OBJECT) {
        odd |= row != JsonToken.VALUE_NULL;
        parser.skipChildren();
        return null;
      }
      List<String> names = new ArrayList<>();
      Set<String> unique = new HashSet<>();
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String name = parser.currentName();
        odd |= !unique.add(name);
        JsonToken value = parser.nextToken();
        if (value == JsonToken.START_OBJECT || value == JsonToken.START_ARRAY) {
          odd = true;
          parser.skipChildren();
        }
        names.add(name);
      }
      return names;
    }

    private void tidb(JsonToken token, JsonParser parser) throws IOException {
      if (token != JsonToken.START_OBJECT) {
        odd |= token != JsonToken.VALUE_NULL;
        parser.skipChildren();
        return;
      }
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String name = parser.currentName();
        JsonToken value = parser.nextToken();
        switch (name) {
          case "commitTs" -> {
            commitTs = timestamp(value, parser);
            commitTsBad = value != JsonToken.VALUE_NULL && commitTs == null;
          }
          case "watermarkTs" -> watermarkTs = timestamp(value, parser);
          case "onlyHandleKey" -> {
            onlyHandleKey = value == JsonToken.VALUE_TRUE;
            odd |= value != JsonToken.VALUE_TRUE && value != JsonToken.VALUE_FALSE && value != JsonToken.VALUE_NULL;
          }
          case "claimCheckLocation" -> claimCheck = value != JsonToken.VALUE_NULL;
          default -> { }
        }
        parser.skipChildren();
      }
    }

    /** A ts in {@code [0, Long.MAX_VALUE]}, else null. */
    private static Long timestamp(JsonToken value, JsonParser parser) throws IOException {
      if (value != JsonToken.VALUE_NUMBER_INT || parser.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
        return null;
      }
      long ts = parser.getLongValue();
      return ts >= 0 ? ts : null;
    }

    Row result() {
      String kind = null;
      boolean notDdl = ddlGiven ? Boolean.FALSE.equals(isDdl) : true;
      boolean rowType = "INSERT".equals(type) || "UPDATE".equals(type) || "DELETE".equals(type) || "INIT".equals(type);
      if (!odd && rowType && notDdl && pkNames && database != null && table != null && !table.isEmpty() && rows >= 1
          && keys != null && sameKeys && oldFits() && !onlyHandleKey && !claimCheck && !commitTsBad) {
        kind = "row";
      } else if (!odd && "TIDB_WATERMARK".equals(type) && !Boolean.TRUE.equals(isDdl) && watermarkTs != null) {
        kind = "watermark";
      }
      String shape = null;
      if ("row".equals(kind)) {
        digest.add(keys);
        digest.add(mysqlType);
        digest.add(sqlType);
        digest.add(keyNames);
        shape = digest.text();
      }
      return RowFactory.create(kind, database, table, shape, commitTs, watermarkTs, rows < 0 ? null : rows);
    }

    private boolean oldFits() {
      if (!"UPDATE".equals(type)) {
        return true;
      }
      if (oldKeys == null || oldKeys.size() != rows) {
        return false;
      }
      for (Set<String> names : oldKeys) {
        if (names == null || !keys.containsAll(names)) {
          return false;
        }
      }
      return true;
    }
  }

  /** A 64-bit digest of lists of texts, each list's size first, so no two different lists of lists digest alike by
   * their elements running on across a boundary. */
  private static final class Digest {
    private long hash = 0xcbf29ce484222325L;

    void add(List<String> texts) {
      if (texts == null) {
        mix(-1);
        return;
      }
      mix(texts.size());
      for (String text : texts) {
        mix(text.length());
        for (int i = 0; i < text.length(); i++) {
          mix(text.charAt(i));
        }
      }
    }

    private void mix(int value) {
      hash ^= value;
      hash *= 0x100000001b3L;
    }

    String text() {
      return Long.toHexString(hash);
    }
  }
}
