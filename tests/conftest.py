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


@pytest.fixture(scope="session")
def standin_folders(tmp_path_factory):
    """Every stand-in model built once per session: {"folders": {hub name: folder}, "setting": the
    DEFSENT_MODEL_FOLDERS value (a JSON file) that hands them to the package}."""
    import standins
    root = tmp_path_factory.mktemp("standins")
    folders = standins.build_all(root)
    return dict(folders=folders, setting=str(root / "folders.json"))


@pytest.fixture(autouse=True)
def standins_off_after_each_test():
    """A rehearsal preflight turns stand-ins on for its process (config.use_standins); each test
    starts from the environment's setting again."""
    from defsent_lite.runtime import config
    yield
    config.use_standins(False)
