"""Search providers. Import the module you need; this package imports nothing heavy."""
