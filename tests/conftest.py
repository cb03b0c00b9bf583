"""Fixtures shared by test modules: the data root downloaded through the local mirror."""
import pytest


@pytest.fixture(scope="session")
def mirrored(tmp_path_factory):
    """(site, sources with the stand-ins' digests, root after the download, reports): built once
    per session, used by the download tests and the rehearsal run."""
    import mirror_site
    site, catalogue = mirror_site.serve()
    root = tmp_path_factory.mktemp("downloaded") / "data"
    reports = mirror_site.download_root(root, site, catalogue)
    yield site, catalogue, root, reports
    site.server.shutdown()
