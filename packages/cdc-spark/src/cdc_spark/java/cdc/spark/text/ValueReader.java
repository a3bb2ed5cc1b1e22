package cdc.spark.text;

import java.util.function.Function;

/**
 * One column's reader for a typer of whole rows: a value from its wire text, and for a text it did not read, the
 * zero-date text it is (null: none, the text is bad). A reader may hold state: one per thread.
 */
public interface ValueReader {
  /** The value, null where the text is not read here. */
  Object value(String text);

  /** For a text {@link #value} did not read: its zero-date text, else null. */
  String zero(String text);

  /** The reader a descriptor of {@link TextValueFunction} names. */
  static ValueReader of(String descriptor) {
    if (descriptor.startsWith("located:")) {
      LocatedTime located = new LocatedTime(descriptor.substring("located:".length()));
      return new ValueReader() {
        @Override
        public Object value(String text) {
          return located.read(text)[0];
        }

        @Override
        public String zero(String text) {
          return (String) located.read(text)[1];
        }
      };
    }
    Function<String, Object> reader = TextValueFunction.reader(descriptor);
    boolean temporal = TextValueFunction.temporal(descriptor);
    return new ValueReader() {
      @Override
      public Object value(String text) {
        return reader.apply(text);
      }

      @Override
      public String zero(String text) {
        return temporal && TidbText.zeroDate(text) ? text : null;
      }
    };
  }
}
