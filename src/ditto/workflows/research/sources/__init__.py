"""Where evidence comes from: documents, internal and external knowledge, the web."""
