"""Task workflows built from public workers (the research workflow lives in ``research``)."""
