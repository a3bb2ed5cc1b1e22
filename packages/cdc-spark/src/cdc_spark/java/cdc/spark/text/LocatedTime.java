package cdc.spark.text;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.ZoneId;

/**
 * Simple JSON's TIMESTAMP: {@code {"location": ZONE, "value": LOCAL}}, read where the location is the one the
 * column's sample named (its instant, or its zero-date text); any other location, or a text that is not such an
 * object, is the codec's.
 */
final class LocatedTime {
  private static final JsonFactory JSON = new JsonFactory();
  private static final String HEAD = "{\"location\":\"";
  private static final String MIDDLE = "\",\"value\":\"";
  private static final String TAIL = "\"}";

  private final String location;
  private final ZoneId zone;

  LocatedTime(String location) {
    this.location = location;
    this.zone = zoneOf(location);
  }

  /** The value and the zero-date text of {@code text} (both null where it is not read here). */
  Object[] read(String text) {
    String[] parts = parts(text);
    if (zone == null || parts == null || !location.equals(parts[0]) || parts[1] == null) {
      return new Object[] {null, null};
    }
    String local = parts[1];
    if (TidbText.zeroDate(local)) {
      return new Object[] {null, local};
    }
    Instant instant = TidbText.timestamp(local, zone);
    return new Object[] {instant, null};
  }

  /** The zone {@code location} names, null for a name Java does not know (its values are then the codec's). */
  private static ZoneId zoneOf(String location) {
    try {
      return ZoneId.of(location);
    } catch (DateTimeException unknown) {
      return null;
    }
  }

  /** The object's {@code location} and {@code value} texts, null for a text that is not one JSON object. */
  private static String[] parts(String text) {
    String[] compact = compact(text);
    if (compact != null) {
      return compact;
    }
    String[] parts = new String[2];
    try (JsonParser parser = JSON.createParser(text)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        return null;
      }
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String field = parser.currentName();
        JsonToken token = parser.nextToken();
        int index = field.equals("location") ? 0 : field.equals("value") ? 1 : -1;
        if (index >= 0 && token.isScalarValue()) {
          parts[index] = token == JsonToken.VALUE_NULL ? null : parser.getText();
        } else {
          parser.skipChildren();
        }
      }
      return parser.nextToken() == null ? parts : null;
    } catch (IOException notJson) {
      return null;
    }
  }

  /**
   * The parts of the form TiCDC writes, {@code {"location":"...","value":"..."}} with no blank and no escape, read
   * without a parser (one made per value took nine tenths of this reader's samples in a Simple decode); null for
   * any other text, which the parser then reads.
   */
  private static String[] compact(String text) {
    if (!text.startsWith(HEAD) || !text.endsWith(TAIL)) {
      return null;
    }
    int middle = text.indexOf(MIDDLE, HEAD.length());
    if (middle < 0 || middle + MIDDLE.length() > text.length() - TAIL.length()) {
      return null;
    }
    String location = text.substring(HEAD.length(), middle);
    String value = text.substring(middle + MIDDLE.length(), text.length() - TAIL.length());
    return plain(location) && plain(value) ? new String[] {location, value} : null;
  }

  /** Whether a string's JSON text is the string itself: no quote, no escape, no control character. */
  private static boolean plain(String text) {
    for (int k = 0; k < text.length(); k++) {
      char c = text.charAt(k);
      if (c == '"' || c == '\\' || c < 0x20) {
        return false;
      }
    }
    return true;
  }
}
