"""The data: strict readers (errors name file and line), dictionary building, the sources and
their downloader."""
