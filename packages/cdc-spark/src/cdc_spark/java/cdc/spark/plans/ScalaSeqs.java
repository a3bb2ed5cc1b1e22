package cdc.spark.plans;

import java.util.List;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/** Java lists as the Scala sequences Catalyst's constructors and {@code withNewChildren} take. */
public final class ScalaSeqs {
  private ScalaSeqs() {}

  public static <T> Seq<T> of(List<T> items) {
    return CollectionConverters.asScala(items).toSeq();
  }
}
