-- Published configs (docs/contract/versions.md): one history per site and mode, version 1, 2, 3, ... Each row is
-- a whole config as published; a rollback is a new row naming the version it restores.
-- published_by is the first 8 hex digits of the publishing key's SHA-256, never the key.
CREATE TABLE config_versions (
    site         TEXT    NOT NULL,
    mode         TEXT    NOT NULL,
    version      BIGINT NOT NULL,
    published_at BIGINT NOT NULL,
    published_by TEXT    NOT NULL,
    message      TEXT,
    sha256       TEXT    NOT NULL,
    restores     BIGINT,
    config       TEXT    NOT NULL,
    PRIMARY KEY (site, mode, version)
);
