package cdc.spark.rows;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Whether bytes are well-formed UTF-8, exactly as Spark's {@code is_valid_utf8} judges them. Spark's check reads byte
 * by byte; here ASCII, most of any message, is passed eight bytes at a time and only the rest goes to Spark's check
 * (an ASCII byte is a whole character, so the rest starts on a character).
 */
public final class Utf8 {
  private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long HIGH_BITS = 0x8080808080808080L;

  private Utf8() {}

  public static boolean valid(byte[] bytes) {
    int at = 0;
    int whole = bytes.length - 7;
    while (at < whole && ((long) LONGS.get(bytes, at) & HIGH_BITS) == 0) {
      at += 8;
    }
    while (at < bytes.length && bytes[at] >= 0) {
      at++;
    }
    return at == bytes.length || UTF8String.fromBytes(bytes, at, bytes.length - at).isValid();
  }
}
