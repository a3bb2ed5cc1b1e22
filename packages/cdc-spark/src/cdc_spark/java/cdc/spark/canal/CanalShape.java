package cdc.spark.canal;

import cdc.spark.rows.EnvelopeReader;
import cdc.spark.rows.Image;
import cdc.spark.rows.ImageRows;
import cdc.spark.rows.Names;
import cdc.spark.rows.TypedTables;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
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
 *
 * <p>Made with a plan ({@code {"tables": [{"database", "table", "rows"}]}}, {@code rows} a {@link CanalRows} plan),
 * it also types each row message of those tables in the same pass, as {@link CanalRows} would: one more field per
 * table after the seven, in the plan's order, holding {@link CanalRows}' result for a row message of that table
 * (null elsewhere). The rows' texts are kept as they are read where the message names its table before its rows, as
 * TiCDC writes it; otherwise {@link CanalRows} reads the message again.
 */
public final class CanalShape extends EnvelopeReader implements UDF1<byte[], Row> {
  // UDF1 named again: Spark registers a Java function by the interfaces its class itself names
  private static final long serialVersionUID = 1L;
  private static final int FIELDS = 7;

  public CanalShape() {
    this(null);
  }

  public CanalShape(String plan) {
    super(plan, FIELDS);
  }

  @Override
  protected ImageRows typer(String tablePlan) {
    return new CanalRows(tablePlan);
  }

  @Override
  protected Read reading(TypedTables tables, byte[] message) {
    return new Envelope(tables);
  }

  /** The members the decode reads; {@code odd}: something the JVM must not type. */
  private static final class Envelope extends Read {
    final TypedTables typers; // null: no rows are kept
    // The positions of the table's columns, where its rows are kept (decided at the first rows met); null: not kept
    Map<String, Integer> images;
    boolean imagesDecided;
    final List<Image> dataImages = new ArrayList<>();
    final List<Image> oldImages = new ArrayList<>();
    boolean imagesBroken; // a row that is not an object, which CanalRows does not type
    String type;
    boolean pkNames;
    Boolean isDdl;
    boolean ddlGiven;
    Names keys; // the first row's column names (null: no row, or a null first row)
    int rows = -1;
    boolean sameKeys = true;
    int oldRows = -1; // -1: no old rows given
    boolean oldWithin = true; // every old row is an object naming only the first row's columns
    List<Names> oldAhead; // old rows read before the first row's names were known
    Long commitTs;
    boolean commitTsBad;
    Long watermarkTs;
    boolean onlyHandleKey;
    boolean claimCheck;
    // the type maps and key names, digested as they are read (a list of texts each; null: not given)
    Digest mysqlType;
    Digest sqlType;
    final Digest keyNames = new Digest();
    final Names scratch = new Names();

    Envelope(TypedTables typers) {
      this.typers = typers;
    }

    /** The table's positions, once rows are met, where its rows are kept: it has a typer and is named by then. */
    private void decideImages() {
      if (!imagesDecided) {
        imagesDecided = true;
        images = typers == null ? null : typers.positions(database, table);
      }
    }

    private Image image(JsonToken row, List<Image> into) {
      if (images == null) {
        return null;
      }
      if (row != JsonToken.START_OBJECT) {
        imagesBroken = true;
        return null;
      }
      Image image = Image.empty(images.size());
      into.add(image);
      return image;
    }

    /** The rows typed from the texts kept as read, else from {@code message} again. */
    @Override
    public List<Row> typed(ImageRows typer, Object[] fields, byte[] message) {
      String shape = (String) fields[3];
      if (images != typer.positions()) { // the table was named after its rows
        return typer.call(message, shape);
      }
      if (imagesBroken) { // a row that is not an object: CanalRows types none of the message
        return null;
      }
      try {
        return typer.typed(CanalRows.changes(type, dataImages, oldImages), shape);
      } catch (RuntimeException unreadable) {
        return null;
      }
    }

    @Override
    public void read(String field, JsonToken token, JsonParser parser) throws IOException {
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
              keyNames.add(parser);
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

    /** A type map's names and values in turn (an empty text for a value of another type), digested. */
    private Digest typeMap(JsonToken token, JsonParser parser, JsonToken valueToken) throws IOException {
      if (token != JsonToken.START_OBJECT) {
        odd |= token != JsonToken.VALUE_NULL;
        parser.skipChildren();
        return null;
      }
      Digest into = new Digest();
      scratch.clear();
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String name = parser.currentName();
        odd |= !scratch.add(name);
        JsonToken value = parser.nextToken();
        into.add(name);
        if (value == valueToken) {
          into.add(parser);
        } else {
          odd = true;
          parser.skipChildren();
          into.add("");
        }
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
      decideImages();
      JsonToken row;
      while ((row = parser.nextToken()) != JsonToken.END_ARRAY) {
        Image image = image(row, dataImages);
        if (rows == 0) {
          keys = row == JsonToken.START_OBJECT ? new Names() : null;
          sameKeys = keys != null && rowNames(row, parser, keys, image);
        } else {
          sameKeys &= sameNames(row, parser, image);
        }
        rows++;
      }
      if (oldAhead != null && keys != null) {
        for (Names names : oldAhead) {
          oldWithin &= within(names);
        }
      }
    }

    private void old(JsonToken token, JsonParser parser) throws IOException {
      if (token != JsonToken.START_ARRAY) {
        odd |= token != JsonToken.VALUE_NULL;
        parser.skipChildren();
        return;
      }
      oldRows = 0;
      decideImages();
      JsonToken row;
      while ((row = parser.nextToken()) != JsonToken.END_ARRAY) {
        oldRows++;
        Image image = image(row, oldImages);
        if (row != JsonToken.START_OBJECT) {
          oldWithin = false;
          rowNames(row, parser, scratch, null);
        } else if (rows >= 0) { // the first row's names are known (or there is none): check as read
          scratch.clear();
          rowNames(row, parser, scratch, image);
          oldWithin &= keys != null && within(scratch);
        } else {
          Names names = new Names();
          rowNames(row, parser, names, image);
          (oldAhead == null ? oldAhead = new ArrayList<>() : oldAhead).add(names);
        }
      }
    }

    private boolean within(Names names) {
      for (int i = 0; i < names.size(); i++) {
        if (!keys.contains(names.get(i))) {
          return false;
        }
      }
      return true;
    }

    /**
     * A row's column names, in order, into {@code names} (cleared by the caller), and its texts into {@code image}
     * where it is kept; false for a row that is not an object. Values must be strings, numbers, booleans or null; a
     * name given twice is odd.
     */
    private boolean rowNames(JsonToken row, JsonParser parser, Names names, Image image) throws IOException {
      if (row != JsonToken.START_OBJECT) {
        odd |= row != JsonToken.VALUE_NULL;
        parser.skipChildren();
        return false;
      }
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String name = parser.currentName();
        odd |= !names.add(name);
        scalar(parser, image, name);
      }
      return true;
    }

    /** Whether a later row names the first row's columns in the same order (each checked as {@link #rowNames}). */
    private boolean sameNames(JsonToken row, JsonParser parser, Image image) throws IOException {
      if (row != JsonToken.START_OBJECT || keys == null) {
        scratch.clear();
        rowNames(row, parser, scratch, image);
        return false;
      }
      int position = 0;
      boolean same = true;
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String name = parser.currentName();
        if (same && !keys.at(position, name)) { // from here on, names given twice are looked for in this row
          same = false;
          scratch.clear();
          for (int i = 0; i < position; i++) {
            scratch.add(keys.get(i));
          }
        }
        if (!same) {
          odd |= !scratch.add(name);
        }
        position++;
        scalar(parser, image, name);
      }
      return same && position == keys.size();
    }

    /** A row's value, which must be a scalar, its text put into {@code image} where the row is kept. */
    private void scalar(JsonParser parser, Image image, String name) throws IOException {
      JsonToken value = parser.nextToken();
      if (value == JsonToken.START_OBJECT || value == JsonToken.START_ARRAY) {
        odd = true;
        parser.skipChildren();
      } else if (image != null) {
        image.put(images.get(name), value == JsonToken.VALUE_NULL ? null : parser.getText());
      }
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

    /** The seven fields of the envelope. */
    @Override
    public Object[] fields() {
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
        Digest names = new Digest();
        for (int i = 0; i < keys.size(); i++) {
          names.add(keys.get(i));
        }
        shape = Digest.of(names, mysqlType, sqlType, keyNames);
      }
      return new Object[] {kind, database, table, shape, commitTs, watermarkTs, rows < 0 ? null : rows};
    }

    private boolean oldFits() {
      return !"UPDATE".equals(type) || (oldRows == rows && oldWithin);
    }
  }

  /**
   * A 64-bit FNV-1a digest of a list of texts, each text's length first, so no two different lists digest alike by
   * their texts running on across a boundary. {@link #of} digests several lists, each with its count.
   */
  private static final class Digest {
    private static final long BASIS = 0xcbf29ce484222325L;
    private long hash = BASIS;
    private int count;

    void add(String text) {
      count++;
      mix(text.length());
      for (int i = 0; i < text.length(); i++) {
        mix(text.charAt(i));
      }
    }

    /** The text of the parser's current token, read in place. */
    void add(JsonParser parser) throws IOException {
      count++;
      char[] chars = parser.getTextCharacters();
      int offset = parser.getTextOffset();
      int length = parser.getTextLength();
      mix(length);
      for (int i = offset; i < offset + length; i++) {
        mix(chars[i]);
      }
    }

    private void mix(int value) {
      hash ^= value;
      hash *= 0x100000001b3L;
    }

    /** The digest of {@code lists} in order (a null one: not given), as hex. */
    static String of(Digest... lists) {
      Digest all = new Digest();
      for (Digest list : lists) {
        if (list == null) {
          all.mix(-1);
          continue;
        }
        all.mix(list.count);
        all.mix((int) list.hash);
        all.mix((int) (list.hash >>> 32));
      }
      return Long.toHexString(all.hash);
    }
  }
}
