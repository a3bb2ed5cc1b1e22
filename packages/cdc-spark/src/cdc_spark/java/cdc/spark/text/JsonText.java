package cdc.spark.text;

import java.util.function.Function;
import org.apache.spark.sql.catalyst.expressions.json.GetJsonObjectEvaluator;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A JSON column's text as the contract's compact text: an object or an array re-printed by Spark's own {@code
 * get_json_object(text, '$')} (its evaluator, so numbers and escapes print exactly as the Spark SQL reader prints
 * them); a scalar document, or one that does not start with {@code {} or {@code [}, is not read here. One instance
 * holds an evaluator, which is not safe to share between threads: each reader makes its own.
 */
final class JsonText implements Function<String, Object> {
  private final GetJsonObjectEvaluator evaluator = new GetJsonObjectEvaluator(UTF8String.fromString("$"));

  @Override
  public Object apply(String text) {
    if (!(text.startsWith("{") || text.startsWith("["))) {
      return null;
    }
    evaluator.setJson(UTF8String.fromString(text));
    Object printed = evaluator.evaluate();
    return printed == null ? null : printed.toString();
  }
}
