package cdc.spark.text;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * TiDB's text forms of column values (Canal-JSON, Simple JSON), read as the decode's Spark SQL readers read them
 * ({@code cdc_spark.decoding.jvm_values}), only stricter: a text in any other form than TiDB prints is not read here
 * (null), and its message then goes to the protocol's codec, which decides. A value read here is the codecs' value.
 */
public final class TidbText {
  private TidbText() {}

  /** {@code [-]digits} (ASCII only) within {@code [low, high]}, else null. */
  public static Long integer(String text, long low, long high) {
    if (!isInteger(text)) {
      return null;
    }
    long value;
    try {
      value = Long.parseLong(text);
    } catch (NumberFormatException beyondLong) {
      return null;
    }
    return value >= low && value <= high ? value : null;
  }

  /** {@code [-]digits} within {@code [low, high]} as a whole decimal, for columns beyond a long (BIGINT UNSIGNED). */
  public static BigDecimal wideInteger(String text, BigInteger low, BigInteger high) {
    if (!isInteger(text)) {
      return null;
    }
    BigInteger value = new BigInteger(text);
    return value.compareTo(low) >= 0 && value.compareTo(high) <= 0 ? new BigDecimal(value) : null;
  }

  /** {@code [-]digits[.digits][e[+-]digits]}, blanks around it allowed, as the double it names, if finite. */
  public static Double float64(String text) {
    text = trimmed(text);
    if (!isFloat(text)) {
      return null;
    }
    double value = Double.parseDouble(text);
    return Double.isFinite(value) ? value : null;
  }

  /** A FLOAT: the double the text names, rounded to the nearest float, if finite. */
  public static Float float32(String text) {
    Double wide = float64(text);
    if (wide == null) {
      return null;
    }
    float value = wide.floatValue();
    return Float.isFinite(value) ? value : null;
  }

  /**
   * {@code [-]digits[.digits]}, blanks around it allowed, with at most {@code scale} fractional digits, that fits
   * {@code decimal(precision,scale)}.
   */
  public static BigDecimal decimal(String text, int precision, int scale) {
    text = trimmed(text);
    int point = text.indexOf('.');
    int fraction = point < 0 ? 0 : text.length() - point - 1;
    if (fraction > scale || !isDecimal(text)) {
      return null;
    }
    BigDecimal value = new BigDecimal(text).setScale(scale);
    return value.precision() - value.scale() <= precision - scale ? value : null;
  }

  /** {@code yyyy-mm-dd}, a real date (a zero date is not: see {@link #zeroDate}). */
  public static LocalDate date(String text) {
    if (!isDate(text) || zeroDate(text)) {
      return null;
    }
    try {
      return LocalDate.of(digits(text, 0, 4), digits(text, 5, 7), digits(text, 8, 10));
    } catch (DateTimeException impossible) {
      return null;
    }
  }

  /** {@code yyyy-mm-dd hh:mm:ss[.f{1,9}]} (or with a {@code T}), to the microsecond (further digits dropped). */
  public static LocalDateTime datetime(String text) {
    if (!isDatetime(text) || zeroDate(text)) {
      return null;
    }
    int nanos = 0;
    if (text.length() > 19) {
      int digits = text.length() - 20;
      nanos = digits(text, 20, text.length()) * (int) Math.pow(10, 9 - digits);
    }
    try {
      return LocalDateTime.of(
          digits(text, 0, 4), digits(text, 5, 7), digits(text, 8, 10),
          digits(text, 11, 13), digits(text, 14, 16), digits(text, 17, 19), nanos / 1000 * 1000);
    } catch (DateTimeException impossible) {
      return null;
    }
  }

  /** A DATETIME's form read as local time in {@code zone}, the instant it names. */
  public static Instant timestamp(String text, ZoneId zone) {
    LocalDateTime local = datetime(text);
    return local == null ? null : local.atZone(zone).toInstant();
  }

  /**
   * A DECIMAL beyond 38 digits, which the contract keeps as text: {@code [-]digits[.digits]} with at most {@code
   * scale} fractional digits, zeros appended up to {@code scale}.
   */
  public static String paddedDecimal(String text, int scale) {
    int point = text.indexOf('.');
    int fraction = point < 0 ? 0 : text.length() - point - 1;
    if (fraction > scale || !isDecimal(text)) {
      return null;
    }
    if (scale == 0 || fraction == scale) {
      return text;
    }
    return text + (point < 0 ? "." : "") + "0".repeat(scale - fraction);
  }

  /** MySQL TIME {@code [-]h:mm:ss[.f{1,9}]} within {@code ±838:59:59}, to the microsecond (further digits dropped). */
  public static Duration time(String text) {
    int start = text.startsWith("-") ? 1 : 0;
    int colon = text.indexOf(':', start);
    int hourDigits = colon - start;
    if (hourDigits < 1 || hourDigits > 3 || !allDigits(text, start, colon)) {
      return null;
    }
    int length = text.length();
    if (length < colon + 6 || text.charAt(colon + 3) != ':' || !allDigits(text, colon + 1, colon + 3)
        || !allDigits(text, colon + 4, colon + 6)) {
      return null;
    }
    int end = colon + 6;
    int fraction = 0;
    if (length > end) {
      int digits = length - end - 1;
      if (text.charAt(end) != '.' || digits < 1 || digits > 9 || !allDigits(text, end + 1, length)) {
        return null;
      }
      String micros = (text.substring(end + 1, Math.min(length, end + 7)) + "00000").substring(0, 6);
      fraction = digits(micros, 0, 6);
    }
    int hours = digits(text, start, colon);
    int minutes = digits(text, colon + 1, colon + 3);
    int seconds = digits(text, colon + 4, colon + 6);
    if (hours > 838 || minutes > 59 || seconds > 59) {
      return null;
    }
    long micros = ((hours * 60L + minutes) * 60L + seconds) * 1_000_000L + fraction;
    return Duration.ofNanos((start == 1 ? -micros : micros) * 1000L);
  }

  /**
   * An ENUM: a 1-based index (0 is MySQL's invalid {@code ""}) or a member's name; without member names ({@code
   * elements} null), the index itself as text.
   */
  public static String enumName(String text, String[] elements) {
    if (!text.isEmpty() && allDigits(text, 0, text.length())) {
      Long number = unsigned(text);
      if (number == null) {
        return null;
      }
      if (number == 0) {
        return "";
      }
      if (elements == null) {
        return number.toString();
      }
      return number <= elements.length ? elements[(int) (number - 1)] : null;
    }
    if (text.isEmpty()) {
      return "";
    }
    return elements != null && Arrays.asList(elements).contains(text) ? text : null;
  }

  /**
   * A SET: a bitmask or comma-joined member names, as its members in declaration order; without member names
   * ({@code elements} null), the bitmask itself as text.
   */
  public static List<String> setNames(String text, String[] elements) {
    boolean digits = !text.isEmpty() && allDigits(text, 0, text.length());
    if (digits) {
      Long number = unsigned(text);
      if (number == null) {
        return null;
      }
      if (elements == null) {
        return List.of(number.toString());
      }
      boolean inRange = elements.length < 63 ? number >> elements.length == 0 : number >= 0;
      if (!inRange) {
        return null;
      }
      List<String> members = new ArrayList<>();
      for (int i = 0; i < elements.length; i++) {
        if (((number >> i) & 1) == 1) {
          members.add(elements[i]);
        }
      }
      return members;
    }
    if (elements == null) {
      return null;
    }
    Set<String> given = text.isEmpty() ? Set.of() : new HashSet<>(Arrays.asList(text.split(",", -1)));
    List<String> members = new ArrayList<>();
    for (String element : elements) {
      if (given.contains(element)) {
        members.add(element);
      }
    }
    return new HashSet<>(members).size() == given.size() ? members : null;
  }

  /** Canal's bytes: ISO-8859-1 text, so a character above U+00FF is not a byte. */
  public static byte[] latin1(String text) {
    byte[] bytes = new byte[text.length()];
    for (int i = 0; i < bytes.length; i++) {
      char c = text.charAt(i);
      if (c > 0xFF) {
        return null;
      }
      bytes[i] = (byte) c;
    }
    return bytes;
  }

  /** Digits as a long, null beyond one. */
  private static Long unsigned(String digits) {
    try {
      return Long.parseLong(digits);
    } catch (NumberFormatException beyondLong) {
      return null;
    }
  }

  /** Whether a text of the DATE or DATETIME form is one of MySQL's zero dates (year, month or day 0). */
  public static boolean zeroDate(String text) {
    if (!(isDate(text) || isDatetime(text))) {
      return false;
    }
    return text.startsWith("0000") || text.startsWith("00", 5) || text.startsWith("00", 8);
  }

  /**
   * {@code text} without the blanks around it that both Python's {@code float()} and {@code Decimal()} (the codecs')
   * and Spark's casts strip: space, tab, line and page breaks, and the information separators.
   */
  static String trimmed(String text) {
    int start = 0;
    int end = text.length();
    while (start < end && isBlank(text.charAt(start))) {
      start++;
    }
    while (end > start && isBlank(text.charAt(end - 1))) {
      end--;
    }
    return text.substring(start, end);
  }

  private static boolean isBlank(char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\u001c' && c <= '\u001f');
  }

  private static boolean isInteger(String text) {
    int start = text.startsWith("-") ? 1 : 0;
    return text.length() > start && allDigits(text, start, text.length());
  }

  private static boolean isDecimal(String text) {
    int start = text.startsWith("-") ? 1 : 0;
    int point = text.indexOf('.');
    if (point < 0) {
      return text.length() > start && allDigits(text, start, text.length());
    }
    return point > start && point < text.length() - 1 && allDigits(text, start, point)
        && allDigits(text, point + 1, text.length());
  }

  private static boolean isFloat(String text) {
    int exponent = Math.max(text.indexOf('e'), text.indexOf('E'));
    String mantissa = exponent < 0 ? text : text.substring(0, exponent);
    if (!isDecimal(mantissa)) {
      return false;
    }
    if (exponent < 0) {
      return true;
    }
    int start = exponent + 1;
    if (start < text.length() && (text.charAt(start) == '+' || text.charAt(start) == '-')) {
      start++;
    }
    return start < text.length() && allDigits(text, start, text.length());
  }

  private static boolean isDate(String text) {
    return text.length() == 10 && dateAt(text);
  }

  private static boolean isDatetime(String text) {
    int length = text.length();
    if (length != 19 && (length < 21 || length > 29 || text.charAt(19) != '.')) {
      return false;
    }
    char between = text.length() > 10 ? text.charAt(10) : 0;
    return dateAt(text) && (between == ' ' || between == 'T') && allDigits(text, 11, 13) && text.charAt(13) == ':'
        && allDigits(text, 14, 16) && text.charAt(16) == ':' && allDigits(text, 17, 19)
        && (length == 19 || allDigits(text, 20, length));
  }

  private static boolean dateAt(String text) {
    return text.length() >= 10 && allDigits(text, 0, 4) && text.charAt(4) == '-' && allDigits(text, 5, 7)
        && text.charAt(7) == '-' && allDigits(text, 8, 10);
  }

  static boolean allDigits(String text, int from, int to) {
    for (int i = from; i < to; i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        return false;
      }
    }
    return true;
  }

  private static int digits(String text, int from, int to) {
    int value = 0;
    for (int i = from; i < to; i++) {
      value = value * 10 + (text.charAt(i) - '0');
    }
    return value;
  }
}
