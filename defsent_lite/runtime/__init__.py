"""What every run stands on: settings and scales (config), model loading (models), the result
cache (cache)."""
