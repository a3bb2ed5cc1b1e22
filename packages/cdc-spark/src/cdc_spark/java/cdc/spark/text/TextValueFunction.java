package cdc.spark.text;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.math.BigInteger;
import java.time.ZoneId;
import java.util.function.Function;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF2;

/**
 * {@link TidbText}'s readers as a Spark function: {@code (text, reader)} to {@code struct<value, zero>}, the value in
 * the Spark type the function was registered with (the reader's) and, for temporal readers, the zero-date text.
 *
 * <p>A reader is named by a descriptor: {@code byte|short|int|long:LOW:HIGH}, {@code wide:LOW:HIGH} (a whole
 * decimal), {@code float}, {@code double}, {@code decimal:PRECISION:SCALE}, {@code date}, {@code datetime},
 * {@code timestamp:ZONE}, {@code located:ZONE} (Simple's TIMESTAMP object: {@link LocatedTime}), {@code
 * padded:SCALE} (a DECIMAL beyond 38 digits, as text), {@code time}, {@code enum:NAMES} and {@code set:NAMES} (a JSON
 * array of the members' names, or {@code null}), {@code json}, {@code latin1} (Canal's bytes), {@code text}, and
 * Simple's {@code unsigned:TYPE:HIGH}, {@code enum-index:NAMES}, {@code set-bits:NAMES} and {@code base64}
 * ({@link SimpleForms});
 * {@code cdc_spark.decoding.java_text} writes them.
 */
public final class TextValueFunction implements UDF2<String, String, Row> {
  private static final long serialVersionUID = 1L;
  private static final ObjectMapper ELEMENTS = new ObjectMapper();

  // The last descriptor seen and its reader: a function is called with one descriptor, row after row
  private transient String descriptor;
  private transient Function<String, Object> reader;
  private transient LocatedTime located;
  private transient boolean temporal;

  @Override
  public Row call(String text, String descriptor) {
    if (!descriptor.equals(this.descriptor)) {
      boolean isLocated = descriptor.startsWith("located:");
      located = isLocated ? new LocatedTime(descriptor.substring("located:".length())) : null;
      reader = isLocated ? null : reader(descriptor);
      temporal = temporal(descriptor);
      this.descriptor = descriptor;
    }
    if (text == null) {
      return RowFactory.create(null, null);
    }
    if (located != null) {
      return RowFactory.create(located.read(text));
    }
    String zero = temporal && TidbText.zeroDate(text) ? text : null;
    return RowFactory.create(reader.apply(text), zero);
  }

  /** The reader a descriptor names (a new one per call: some hold state, such as the JSON reader). */
  public static Function<String, Object> reader(String descriptor) {
    String[] parts = descriptor.split(":", 3);
    return switch (parts[0]) {
      case "byte", "short", "int", "long" -> {
        long low = Long.parseLong(parts[1]); // the bounds once, not per value
        long high = Long.parseLong(parts[2]);
        int bytes = switch (parts[0]) {
          case "byte" -> 1;
          case "short" -> 2;
          case "int" -> 4;
          default -> 8;
        };
        yield bytes == 8 ? text -> TidbText.integer(text, low, high)
            : text -> narrowed(TidbText.integer(text, low, high), bytes);
      }
      case "wide" -> {
        BigInteger low = new BigInteger(parts[1]);
        BigInteger high = new BigInteger(parts[2]);
        yield text -> TidbText.wideInteger(text, low, high);
      }
      case "float" -> TidbText::float32;
      case "double" -> TidbText::float64;
      case "decimal" -> {
        int precision = Integer.parseInt(parts[1]);
        int scale = Integer.parseInt(parts[2]);
        yield text -> TidbText.decimal(text, precision, scale);
      }
      case "date" -> TidbText::date;
      case "datetime" -> TidbText::datetime;
      case "timestamp" -> {
        ZoneId zone = ZoneId.of(descriptor.substring("timestamp:".length()));
        yield text -> TidbText.timestamp(text, zone);
      }
      case "padded" -> {
        int scale = Integer.parseInt(parts[1]);
        yield text -> TidbText.paddedDecimal(text, scale);
      }
      case "time" -> TidbText::time;
      case "enum" -> {
        String[] elements = elements(descriptor.substring("enum:".length()));
        yield text -> TidbText.enumName(text, elements);
      }
      case "set" -> {
        String[] elements = elements(descriptor.substring("set:".length()));
        yield text -> TidbText.setNames(text, elements);
      }
      case "json" -> new JsonText();
      case "unsigned" -> {
        String type = parts[1];
        long high = Long.parseLong(parts[2]);
        yield text -> SimpleForms.unsigned(text, type, high);
      }
      case "enum-index" -> {
        String[] elements = elements(descriptor.substring("enum-index:".length()));
        yield text -> SimpleForms.enumIndex(text, elements);
      }
      case "set-bits" -> {
        String[] elements = elements(descriptor.substring("set-bits:".length()));
        yield text -> SimpleForms.setBits(text, elements);
      }
      case "base64" -> SimpleForms::base64;
      case "latin1" -> TidbText::latin1;
      case "text" -> text -> text;
      default -> throw new IllegalArgumentException("no TiDB text reader " + descriptor);
    };
  }

  /** Whether the reader a descriptor names has zero dates. */
  public static boolean temporal(String descriptor) {
    return descriptor.startsWith("date") || descriptor.startsWith("timestamp") || descriptor.startsWith("located:");
  }

  /** A JSON array of member names, or {@code null} (a column whose names the wire does not carry). */
  private static String[] elements(String json) {
    try {
      return ELEMENTS.readValue(json, String[].class);
    } catch (IOException malformed) {
      throw new IllegalArgumentException("no member names in " + json, malformed);
    }
  }

  /** {@code value} as the boxed type of a Spark integral type of {@code bytes} bytes (its range already held). */
  private static Object narrowed(Long value, int bytes) {
    if (value == null) {
      return null;
    }
    return switch (bytes) {
      case 1 -> value.byteValue();
      case 2 -> value.shortValue();
      default -> value.intValue();
    };
  }
}
