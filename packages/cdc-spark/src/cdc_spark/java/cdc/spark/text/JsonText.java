package cdc.spark.text;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;

/**
 * A JSON column's text as the contract's compact text: an object or an array re-printed exactly as Spark's own
 * {@code get_json_object(text, '$')} prints it, so numbers and escapes print as the Spark SQL reader prints them.
 * That is: the factory Spark's evaluator uses (unescaped control characters and single quotes allowed), a parser
 * over characters (Spark's reads the UTF-8 through a reader), the first value copied whole into a UTF-8 generator,
 * null where Jackson finds it malformed. Spark's evaluator itself costs a stream decoder per value; this does not. A
 * scalar document, or one that does not start with {@code {} or {@code [}, is not read here.
 */
final class JsonText implements Function<String, Object> {
  private static final JsonFactory JSON = JsonFactory.builder()
      .enable(JsonReadFeature.ALLOW_UNESCAPED_CONTROL_CHARS)
      .enable(JsonReadFeature.ALLOW_SINGLE_QUOTES)
      .build();

  @Override
  public Object apply(String text) {
    if (!(text.startsWith("{") || text.startsWith("["))) {
      return null;
    }
    ByteArrayOutputStream printed = new ByteArrayOutputStream(text.length());
    try (JsonParser parser = JSON.createParser(text)) {
      try (JsonGenerator generator = JSON.createGenerator(printed, JsonEncoding.UTF8)) {
        parser.nextToken();
        generator.copyCurrentStructure(parser);
      }
    } catch (JsonProcessingException malformed) {
      return null;
    } catch (IOException unreachable) { // in memory, both ways
      throw new IllegalStateException(unreachable);
    }
    return printed.toString(StandardCharsets.UTF_8);
  }
}
