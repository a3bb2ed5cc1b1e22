package cdc.spark.text;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Base64;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.UnBase64$;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Simple JSON's own forms, read as the decode's Spark SQL readers read them ({@code cdc_spark.decoding.simple}):
 * unsigned integers and BIT as digits that may be a negative 64-bit number, ENUM as its index, SET as its bitmask,
 * bytes as base64.
 */
public final class SimpleForms {
  private static final BigInteger SPAN = BigInteger.ONE.shiftLeft(64);
  private static final BigInteger WIDEST = BigInteger.TEN.pow(20); // decimal(20,0) holds less

  private SimpleForms() {}

  /** {@code [-]digits}, a negative number wrapped to 64 bits, held to {@code [0, high]}; as {@code type}. */
  public static Object unsigned(String text, String type, long high) {
    BigInteger value = wide(text);
    if (value == null) {
      return null;
    }
    if (value.signum() < 0) {
      value = value.add(SPAN);
    }
    if (value.compareTo(SPAN) >= 0) {
      return null;
    }
    if (type.equals("wide")) {
      return new BigDecimal(value);
    }
    if (value.bitLength() > 63 || value.longValue() > high) {
      return null;
    }
    long number = value.longValue();
    return switch (type) {
      case "byte" -> (byte) number;
      case "short" -> (short) number;
      case "int" -> (int) number;
      default -> number;
    };
  }

  /** ENUM: its 1-based index (digits only). */
  public static String enumIndex(String text, String[] elements) {
    return !text.isEmpty() && TidbText.allDigits(text, 0, text.length()) ? TidbText.enumName(text, elements) : null;
  }

  /** SET: its bitmask (a negative one is refused); without member names, the bitmask itself as text. */
  public static List<String> setBits(String text, String[] elements) {
    BigInteger value = wide(text);
    if (value == null || value.signum() < 0) {
      return null;
    }
    if (elements == null) {
      return List.of(value.toString());
    }
    return value.bitLength() > 63 ? null : TidbText.setNames(value.toString(), elements);
  }

  /** Base64 as Spark's {@code try_to_binary(text, 'base64')} reads it (its own check, then the MIME decoder). */
  public static byte[] base64(String text) {
    if (!UnBase64$.MODULE$.isValidBase64(UTF8String.fromString(text))) {
      return null;
    }
    try {
      return Base64.getMimeDecoder().decode(text);
    } catch (IllegalArgumentException malformed) {
      return null;
    }
  }

  /** {@code [-]digits} that a {@code decimal(20,0)} holds, else null. */
  private static BigInteger wide(String text) {
    int start = text.startsWith("-") ? 1 : 0;
    if (text.length() <= start || !TidbText.allDigits(text, start, text.length())) {
      return null;
    }
    BigInteger value = new BigInteger(text);
    return value.abs().compareTo(WIDEST) < 0 ? value : null;
  }
}
