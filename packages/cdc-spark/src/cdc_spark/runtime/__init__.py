"""The processes a session runs in, as the pipeline sets them up: the driver JVM's options and class-sharing archive
(:mod:`.class_sharing`), the project's Java code on the classpath (:mod:`.java_code`), which JVMs compile Spark's
large generated methods (:mod:`.jit`), memory pages for a local driver's heap (:mod:`.memory_pages`), where a
master runs its JVMs (:mod:`.masters`) and the Python workers' imports (:mod:`.worker_imports`). The pipeline's
own code (decode, apply, the job) imports from here; nothing here imports the pipeline."""
