"""Debezium change events as Kafka Connect's Avro converter writes them (protocol id ``debezium-avro``): the same
envelope and logical types as the JSON form, Confluent-framed Avro with writer schemas in a Schema Registry."""
