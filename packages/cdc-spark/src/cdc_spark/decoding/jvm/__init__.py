"""The JVM decode path, stage by stage (:mod:`~cdc_spark.decoding.jvm.batch` walks them in order):

- :mod:`~cdc_spark.decoding.jvm.shapes`: the batch's shapes, samples and partition clock (stage 1);
- :mod:`~cdc_spark.decoding.jvm.table_typing`: the SQL expressions that type a table's rows (stage 3);
- :mod:`~cdc_spark.decoding.jvm.java_typing`: the adapter's Java row typer, and the speculation (stage 3);
- :mod:`~cdc_spark.decoding.jvm.wide`: the wide frame of typed rows, its counts and each table's part (stage 3, 5);
- :mod:`~cdc_spark.decoding.jvm.clock`: the order ts of changes without a commit ts;
- :mod:`~cdc_spark.decoding.jvm.own_methods`: boundaries that keep a pass typed in one stage in small methods;
- :mod:`~cdc_spark.decoding.jvm.caches`: what is kept from one batch to the next.
"""
