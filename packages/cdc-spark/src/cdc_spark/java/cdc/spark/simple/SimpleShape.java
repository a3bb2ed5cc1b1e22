package cdc.spark.simple;

import cdc.spark.rows.Members;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.HashSet;
import java.util.Set;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;

/**
 * What the decode needs to know of a Simple JSON message before typing it, in one streaming pass that keeps none of
 * its values: {@code struct<kind, database, table, commit_ts, schema_version, checksum>}.
 *
 * <p>{@code kind} is {@code row} for a row message the JVM may type (the rules of {@code cdc_spark.decoding.simple}:
 * version 1, a row type with the images it needs, a database, a table, a schema version, a commit ts within a long,
 * no handle-key-only or claim-check row), {@code watermark}, {@code schema} for a message that teaches a schema
 * version (BOOTSTRAP and DDL), null for anything else (the codec's). It is stricter than Spark's {@code from_json}: a
 * member of another JSON type than Simple writes, a duplicate member or text after the document makes the message
 * the codec's. {@code database} and {@code table} fall back to the (old) table schema's, as a DDL names them there.
 */
public final class SimpleShape implements UDF1<byte[], Row> {
  private static final long serialVersionUID = 1L;
  private static final Row NOTHING = RowFactory.create(null, null, null, null, null, null);
  private static final Set<String> SCHEMA_TYPES =
      Set.of("BOOTSTRAP", "CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE", "RECOVER", "ERASE", "QUERY");

  @Override
  public Row call(byte[] message) {
    if (message == null) {
      return NOTHING;
    }
    Envelope envelope = new Envelope();
    try {
      boolean wellFormed = Members.read(message, envelope::read, true); // read before odd is (|= would not)
      envelope.odd |= !wellFormed;
    } catch (IOException | RuntimeException malformed) {
      return NOTHING;
    }
    return envelope.result();
  }

  /** The members the decode reads; {@code odd}: something the JVM must not type. */
  private static final class Envelope {
    Long version;
    String type;
    String database;
    String table;
    String[] schemaNames;
    String[] oldSchemaNames;
    Long commitTs;
    Long schemaVersion;
    boolean data;
    boolean old;
    boolean handleKeyOnly;
    boolean claimCheck;
    boolean checksum;
    boolean odd;

    void read(String field, JsonToken token, JsonParser parser) throws IOException {
      switch (field) {
        case "version" -> version = integer(token, parser);
        case "type" -> type = string(token, parser);
        case "database" -> database = string(token, parser);
        case "table" -> table = string(token, parser);
        case "commitTs" -> {
          Long ts = integer(token, parser);
          commitTs = ts != null && ts >= 0 ? ts : null;
        }
        case "schemaVersion" -> schemaVersion = integer(token, parser);
        case "data" -> data = image(token, parser);
        case "old" -> old = image(token, parser);
        case "handleKeyOnly" -> {
          handleKeyOnly = token == JsonToken.VALUE_TRUE;
          odd |= token != JsonToken.VALUE_TRUE && token != JsonToken.VALUE_FALSE && token != JsonToken.VALUE_NULL;
        }
        case "claimCheckLocation" -> {
          claimCheck = token != JsonToken.VALUE_NULL;
          parser.skipChildren();
        }
        case "checksum" -> {
          checksum = token != JsonToken.VALUE_NULL;
          parser.skipChildren();
        }
        case "tableSchema" -> schemaNames = names(token, parser);
        case "preTableSchema" -> oldSchemaNames = names(token, parser);
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

    private Long integer(JsonToken token, JsonParser parser) throws IOException {
      if (token == JsonToken.VALUE_NUMBER_INT && parser.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
        return parser.getLongValue();
      }
      odd |= token != JsonToken.VALUE_NULL;
      parser.skipChildren();
      return null;
    }

    /** Whether an image is given: an object whose values are scalars or objects (TIMESTAMPs). */
    private boolean image(JsonToken token, JsonParser parser) throws IOException {
      if (token != JsonToken.START_OBJECT) {
        odd |= token != JsonToken.VALUE_NULL;
        parser.skipChildren();
        return false;
      }
      Set<String> names = new HashSet<>();
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        odd |= !names.add(parser.currentName());
        JsonToken value = parser.nextToken();
        odd |= value == JsonToken.START_ARRAY;
        parser.skipChildren();
      }
      return true;
    }

    /** A (old) table schema's {@code schema} and {@code table}. */
    private String[] names(JsonToken token, JsonParser parser) throws IOException {
      if (token != JsonToken.START_OBJECT) {
        odd |= token != JsonToken.VALUE_NULL;
        parser.skipChildren();
        return null;
      }
      String[] names = new String[2];
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String name = parser.currentName();
        JsonToken value = parser.nextToken();
        int index = name.equals("schema") ? 0 : name.equals("table") ? 1 : -1;
        if (index >= 0) {
          names[index] = string(value, parser);
        } else {
          parser.skipChildren();
        }
      }
      return names;
    }

    Row result() {
      if (odd) {
        return NOTHING;
      }
      boolean first = version != null && version == 1;
      boolean images = switch (type == null ? "" : type) {
        case "INSERT" -> data;
        case "UPDATE" -> data && old;
        case "DELETE" -> old;
        default -> false;
      };
      String kind = null;
      if (first && images && database != null && table != null && schemaVersion != null && commitTs != null
          && !handleKeyOnly && !claimCheck) {
        kind = "row";
      } else if (first && "WATERMARK".equals(type) && commitTs != null) {
        kind = "watermark";
      } else if (type != null && SCHEMA_TYPES.contains(type)) {
        kind = "schema";
      }
      String named = first(database, schemaNames, oldSchemaNames, 0);
      String tableNamed = first(table, schemaNames, oldSchemaNames, 1);
      return RowFactory.create(kind, named, tableNamed, commitTs, schemaVersion, checksum);
    }

    private static String first(String own, String[] schema, String[] oldSchema, int index) {
      if (own != null) {
        return own;
      }
      if (schema != null && schema[index] != null) {
        return schema[index];
      }
      return oldSchema == null ? null : oldSchema[index];
    }
  }
}
