package cdc.spark.debezium;

import cdc.spark.rows.EnvelopeReader;
import cdc.spark.rows.ImageRows;
import cdc.spark.rows.Members;
import cdc.spark.rows.Names;
import cdc.spark.rows.TypedTables;
import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.catalyst.expressions.XXH64;
import org.apache.spark.unsafe.Platform;

/**
 * What the decode needs of a Debezium JSON message, read in one streaming pass: {@code struct<kind, database, table,
 * schema, commit_ts, op, before, after>}.
 *
 * <p>The members are the payload's where the message has one ({@code {"schema": ..., "payload": {...}}}), the
 * message's own otherwise (a schemaless stream). {@code kind} is {@code row} for a row change the JVM may type (the
 * rules of {@code cdc_spark.decoding.debezium}: op c, r, u or d, no DDL, a database and a table in its source, the
 * image its op needs, a commit ts within a long or none), {@code watermark} for TiCDC's (op m, no message, a commit ts
 * within a long), null for anything else (the codec's). It is stricter than Spark's {@code from_json}: a member of
 * another JSON type than Debezium writes, a member named twice or text after the document makes the message the
 * codec's. {@code schema} is a digest of the schema's bytes as written (null: no schema), not of its text re-printed,
 * which Spark would build for the whole document. {@code before} and {@code after} are a row change's images, each
 * value's text as Spark's {@code from_json} gives it for a string: a string's own text, any other value printed by
 * Jackson as Spark prints it (a number through its parsed value, an object or array compact).
 *
 * <p>A schema is most of a message, and a batch holds few: the reader remembers the last {@value #SCHEMAS} schemas
 * it digested (as their bytes), and a message whose schema is one of them byte for byte is not parsed there. Where
 * the schema is the message's last member (TiCDC writes it so), the reader checks from the bytes that only the
 * document's close follows it; where it is the first (Kafka Connect's converter), the rest of the message is read
 * as a document of its own.
 *
 * <p>The rows are typed by Spark SQL from the images; this reader is made without a plan.
 */
public final class DebeziumShape extends EnvelopeReader implements UDF1<byte[], Row> {
  // UDF1 named again: Spark registers a Java function by the interfaces its class itself names
  private static final long serialVersionUID = 1L;
  private static final int FIELDS = 8;
  private static final JsonFactory PRINTER = new JsonFactory();
  private static final long SEED = 42L; // Spark's xxhash64 seed: the digest is that of the bytes by xxhash64

  private static final int SCHEMAS = 32; // a batch's tables, one schema each, and then some
  private static final byte[] SCHEMA_NAME = "\"schema\"".getBytes(StandardCharsets.US_ASCII);

  private transient List<Known> schemas; // this task's, the newest first

  public DebeziumShape() {
    super(null, FIELDS);
  }

  /** A schema digested before: its bytes as written and their digest. */
  private record Known(byte[] bytes, long digest) {}

  @Override
  protected ImageRows typer(String tablePlan) {
    throw new UnsupportedOperationException("Debezium rows are typed by Spark SQL from the images read here");
  }

  @Override
  protected Read reading(TypedTables tables, byte[] message) {
    if (schemas == null) {
      schemas = new ArrayList<>();
    }
    return new Envelope(message, schemas);
  }

  @Override
  protected boolean members(byte[] message, Read read) throws IOException {
    Envelope envelope = (Envelope) read;
    int at = schemaFirst(message);
    Known known = at < 0 ? null : envelope.knownAt(at);
    int after = known == null ? -1 : blanks(message, at + known.bytes.length);
    if (after >= 0 && after < message.length && message[after] == ',') {
      envelope.schemaGiven = true;
      envelope.schema = known.digest;
      byte[] rest = new byte[message.length - after]; // "{" and the members after the schema's comma
      rest[0] = '{';
      System.arraycopy(message, after + 1, rest, 1, rest.length - 1);
      return Members.read(rest, read, true); // the schema's bytes were valid UTF-8 when first met
    }
    boolean wellFormed = Members.read(message, read, true);
    boolean digested = envelope.schemaEnd > envelope.schemaStart;
    if (wellFormed && digested && envelope.knownAt(envelope.schemaStart) == null) {
      schemas.add(0, new Known(Arrays.copyOfRange(message, envelope.schemaStart, envelope.schemaEnd), envelope.schema));
      if (schemas.size() > SCHEMAS) {
        schemas.remove(SCHEMAS);
      }
    }
    return wellFormed;
  }

  /** The schema remembered whose bytes are {@code message}'s from {@code at}, else null. */
  private static Known known(List<Known> schemas, byte[] message, int at) {
    for (Known known : schemas) {
      int end = at + known.bytes.length;
      if (end <= message.length && Arrays.equals(message, at, end, known.bytes, 0, known.bytes.length)) {
        return known;
      }
    }
    return null;
  }

  /** Where the schema object opens in a message whose first member is its schema, else -1. */
  private static int schemaFirst(byte[] message) {
    int at = blanks(message, 0);
    if (at >= message.length || message[at] != '{') {
      return -1;
    }
    at = blanks(message, at + 1);
    if (!Arrays.equals(message, at, Math.min(at + SCHEMA_NAME.length, message.length), SCHEMA_NAME, 0,
        SCHEMA_NAME.length)) {
      return -1;
    }
    at = blanks(message, at + SCHEMA_NAME.length);
    if (at >= message.length || message[at] != ':') {
      return -1;
    }
    at = blanks(message, at + 1);
    return at < message.length && message[at] == '{' ? at : -1;
  }

  /** Whether {@code message} from {@code at} is the document's close alone, blanks around it. */
  private static boolean closesAt(byte[] message, int at) {
    int close = blanks(message, at);
    return close < message.length && message[close] == '}' && blanks(message, close + 1) == message.length;
  }

  /** The first position from {@code at} that is not a JSON blank. */
  private static int blanks(byte[] message, int at) {
    while (at < message.length && (message[at] == ' ' || message[at] == '\n' || message[at] == '\r'
        || message[at] == '\t')) {
      at++;
    }
    return at;
  }

  /** The message's schema digest and its change's members, at the top and in the payload. */
  private static final class Envelope extends Read {
    final byte[] message;
    final List<Known> schemas;
    boolean schemaGiven;
    Long schema;
    int schemaStart; // where the schema digested here lies in the message (none: both 0)
    int schemaEnd;
    boolean finished; // the schema was the last member, known and followed by the document's close
    int lookedAt = -1; // where the remembered schemas were looked up in this message, and what was found there
    Known found;
    final Change top = new Change();
    Change payload; // null: no payload object (a schemaless stream's message, or a payload of null)

    Envelope(byte[] message, List<Known> schemas) {
      this.message = message;
      this.schemas = schemas;
    }

    @Override
    public boolean finished() {
      return finished;
    }

    /** The remembered schema whose bytes are the message's from {@code start}, else null; looked up once. */
    Known knownAt(int start) {
      if (start != lookedAt) {
        lookedAt = start;
        found = known(schemas, message, start);
      }
      return found;
    }

    @Override
    public void read(String field, JsonToken token, JsonParser parser) throws IOException {
      switch (field) {
        case "schema" -> schema(token, parser);
        case "payload" -> {
          if (token == JsonToken.START_OBJECT) {
            payload = new Change();
            Names seen = new Names();
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
              String name = parser.currentName();
              odd |= !seen.add(name);
              payload.member(name, parser.nextToken(), parser);
            }
          } else {
            odd |= token != JsonToken.VALUE_NULL;
            parser.skipChildren();
          }
        }
        default -> top.member(field, token, parser);
      }
    }

    /** The schema's bytes as written, digested (an object; null is no schema), or known from an earlier message. */
    private void schema(JsonToken token, JsonParser parser) throws IOException {
      odd |= schemaGiven; // read from the bytes before the parser began: now named twice
      schemaGiven = true;
      if (token != JsonToken.START_OBJECT) {
        odd |= token != JsonToken.VALUE_NULL;
        parser.skipChildren();
        return;
      }
      long start = parser.currentTokenLocation().getByteOffset();
      Known known = start < 0 || start >= message.length ? null : knownAt((int) start);
      if (known != null && closesAt(message, (int) start + known.bytes.length)) {
        schema = known.digest;
        finished = true;
        return;
      }
      parser.skipChildren();
      long end = parser.currentLocation().getByteOffset();
      if (start < 0 || end <= start || end > message.length) {
        odd = true; // the parser did not count bytes: no digest to trust
        return;
      }
      schema = XXH64.hashUnsafeBytes(message, Platform.BYTE_ARRAY_OFFSET + start, (int) (end - start), SEED);
      schemaStart = (int) start;
      schemaEnd = (int) end;
    }

    @Override
    public List<Row> typed(ImageRows typer, Object[] fields, byte[] message) {
      return null; // made without a plan: no rows are typed here
    }

    @Override
    public Object[] fields() {
      Change change = payload != null ? payload : top;
      String kind = null;
      if (!odd && change.row()) {
        kind = "row";
      } else if (!odd && change.watermark()) {
        kind = "watermark";
      }
      boolean row = "row".equals(kind);
      return new Object[] {
        kind, change.database, change.table, schema, change.commitTs, change.op,
        row ? change.before : null, row ? change.after : null,
      };
    }

    /** The members of a change (the payload's or the message's own); unknown ones skipped. */
    private final class Change {
      String op;
      Map<String, String> before;
      Map<String, String> after;
      String database;
      String table;
      Long commitTs; // null: none, or not one within a long
      boolean commitTsBad;
      boolean ddl; // a DDL statement given
      boolean message; // a watermark's message given

      void member(String field, JsonToken token, JsonParser parser) throws IOException {
        switch (field) {
          case "op" -> op = string(token, parser);
          case "before" -> before = image(token, parser);
          case "after" -> after = image(token, parser);
          case "source" -> source(token, parser);
          case "ddl" -> ddl = given(token, parser);
          case "message" -> message = given(token, parser);
          default -> parser.skipChildren();
        }
      }

      boolean row() {
        boolean rowOp = "c".equals(op) || "r".equals(op) || "u".equals(op) || "d".equals(op);
        return rowOp && !ddl && database != null && table != null && !commitTsBad
            && ("d".equals(op) ? before != null : after != null);
      }

      boolean watermark() {
        return "m".equals(op) && !message && commitTs != null;
      }

      private void source(JsonToken token, JsonParser parser) throws IOException {
        if (token != JsonToken.START_OBJECT) {
          odd |= token != JsonToken.VALUE_NULL;
          parser.skipChildren();
          return;
        }
        Names seen = new Names();
        String catalog = null;
        String namespace = null;
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
          String name = parser.currentName();
          odd |= !seen.add(name);
          JsonToken value = parser.nextToken();
          switch (name) {
            case "db" -> catalog = string(value, parser);
            case "schema" -> namespace = string(value, parser);
            case "table" -> table = string(value, parser);
            case "commit_ts" -> commitTs(value, parser);
            default -> parser.skipChildren();
          }
        }
        // the schema holds the table where the connector names one (PostgreSQL, Oracle, SQL Server, Db2), as
        // MySQL's database does: the codec reads it so (cdc_debezium.decoder)
        database = namespace != null && !namespace.isEmpty() ? namespace : catalog;
      }

      /** A ts in {@code [0, Long.MAX_VALUE]}; anything else but null is bad. */
      private void commitTs(JsonToken value, JsonParser parser) throws IOException {
        commitTs = null;
        commitTsBad = false;
        if (value == JsonToken.VALUE_NUMBER_INT && parser.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
          long ts = parser.getLongValue();
          commitTs = ts >= 0 ? ts : null;
        }
        commitTsBad = value != JsonToken.VALUE_NULL && commitTs == null;
        parser.skipChildren();
      }
    }

    /** Whether a member is given other than as null. */
    private static boolean given(JsonToken token, JsonParser parser) throws IOException {
      parser.skipChildren();
      return token != JsonToken.VALUE_NULL;
    }

    /** An image: an object's members in order, each value's text (null: not an object; a name twice is odd). */
    private Map<String, String> image(JsonToken token, JsonParser parser) throws IOException {
      if (token != JsonToken.START_OBJECT) {
        odd |= token != JsonToken.VALUE_NULL;
        parser.skipChildren();
        return null;
      }
      Map<String, String> image = new LinkedHashMap<>();
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String name = parser.currentName();
        JsonToken value = parser.nextToken();
        odd |= image.containsKey(name);
        image.put(name, text(value, parser));
      }
      return image;
    }
  }

  /** A value's text as Spark's {@code from_json} reads it into a string. */
  static String text(JsonToken value, JsonParser parser) throws IOException {
    switch (value) {
      case VALUE_STRING:
        return parser.getText();
      case VALUE_NULL:
        return null;
      case VALUE_TRUE:
        return "true";
      case VALUE_FALSE:
        return "false";
      case VALUE_NUMBER_INT:
        // Spark prints an integer from its parsed value: its text, but for a negative zero
        String digits = parser.getText();
        return digits.equals("-0") ? "0" : digits;
      default:
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (JsonGenerator generator = PRINTER.createGenerator(printed, JsonEncoding.UTF8)) {
          generator.copyCurrentStructure(parser);
        }
        return printed.toString(StandardCharsets.UTF_8);
    }
  }
}
