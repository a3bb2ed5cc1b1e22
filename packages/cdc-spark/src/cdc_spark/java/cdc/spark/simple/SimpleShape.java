package cdc.spark.simple;

import cdc.spark.rows.EnvelopeReader;
import cdc.spark.rows.Image;
import cdc.spark.rows.ImageRows;
import cdc.spark.rows.Names;
import cdc.spark.rows.TypedTables;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Row;
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
 *
 * <p>Made with a plan ({@link TypedTables}: {@link SimpleRows} plans), it also types each row message of those
 * tables in the same pass, as {@link SimpleRows} would, by its schema version: one more field per table after the
 * six. The images' texts are kept as they are read where the message names its table before them, as TiCDC writes
 * it; otherwise {@link SimpleRows} reads the message again.
 */
public final class SimpleShape extends EnvelopeReader implements UDF1<byte[], Row> {
  // UDF1 named again: Spark registers a Java function by the interfaces its class itself names
  private static final long serialVersionUID = 1L;
  private static final int FIELDS = 6;
  private static final Set<String> SCHEMA_TYPES =
      Set.of("BOOTSTRAP", "CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE", "RECOVER", "ERASE", "QUERY");

  public SimpleShape() {
    this(null);
  }

  public SimpleShape(String plan) {
    super(plan, FIELDS);
  }

  @Override
  protected ImageRows typer(String tablePlan) {
    return new SimpleRows(tablePlan);
  }

  @Override
  protected Read reading(TypedTables tables, byte[] message) {
    return new Envelope(tables, message);
  }

  /** The members the decode reads; {@code odd}: something the JVM must not type. */
  private static final class Envelope extends Read {
    final TypedTables typers; // null: no images are kept
    final byte[] message;
    // The positions of the table's columns, where its images are kept (decided at the first image met); null: not
    Map<String, Integer> images;
    boolean imagesDecided;
    Image dataImage;
    Image oldImage;
    final Names names = new Names();
    Long version;
    String type;
    String[] schemaNames;
    String[] oldSchemaNames;
    Long commitTs;
    Long schemaVersion;
    boolean data;
    boolean old;
    boolean handleKeyOnly;
    boolean claimCheck;
    boolean checksum;

    Envelope(TypedTables typers, byte[] message) {
      this.typers = typers;
      this.message = message;
    }

    /** The change typed from the texts kept as read, else from {@code message} again. */
    @Override
    public List<Row> typed(ImageRows typer, Object[] fields, byte[] message) {
      String shape = String.valueOf(schemaVersion); // the shape of a row message: its schema version
      if (images != typer.positions()) { // the table was named after its images
        return typer.call(message, shape);
      }
      return typer.typed(SimpleRows.changes(type, dataImage, oldImage), shape);
    }

    @Override
    public void read(String field, JsonToken token, JsonParser parser) throws IOException {
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
        case "data" -> {
          dataImage = kept(token);
          data = image(token, parser, dataImage);
        }
        case "old" -> {
          oldImage = kept(token);
          old = image(token, parser, oldImage);
        }
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

    private Long integer(JsonToken token, JsonParser parser) throws IOException {
      if (token == JsonToken.VALUE_NUMBER_INT && parser.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
        return parser.getLongValue();
      }
      odd |= token != JsonToken.VALUE_NULL;
      parser.skipChildren();
      return null;
    }

    /** An image to keep the texts of the image at {@code token} in, where images are kept and it is an object. */
    private Image kept(JsonToken token) {
      if (!imagesDecided) {
        imagesDecided = true;
        images = typers == null ? null : typers.positions(database, table);
      }
      return images == null || token != JsonToken.START_OBJECT ? null : Image.empty(images.size());
    }

    /**
     * Whether an image is given: an object whose values are scalars or objects (TIMESTAMPs), their texts put into
     * {@code image} where it is kept (an object's own text in the message).
     */
    private boolean image(JsonToken token, JsonParser parser, Image image) throws IOException {
      if (token != JsonToken.START_OBJECT) {
        odd |= token != JsonToken.VALUE_NULL;
        parser.skipChildren();
        return false;
      }
      names.clear();
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String name = parser.currentName();
        odd |= !names.add(name);
        JsonToken value = parser.nextToken();
        odd |= value == JsonToken.START_ARRAY;
        if (image == null || value == JsonToken.START_ARRAY) {
          parser.skipChildren();
        } else if (value == JsonToken.START_OBJECT) {
          image.put(images.get(name), Image.objectText(parser, message));
        } else {
          image.put(images.get(name), value == JsonToken.VALUE_NULL ? null : parser.getText());
        }
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

    /** The six fields of the envelope. */
    @Override
    public Object[] fields() {
      if (odd) {
        return new Object[FIELDS];
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
      return new Object[] {kind, named, tableNamed, commitTs, schemaVersion, checksum};
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
