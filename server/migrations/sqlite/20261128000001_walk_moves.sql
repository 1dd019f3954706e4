-- docs/contract/read-api.md "Pagination" (issue 35): a walk returns each record once when its time moves during
-- the walk (a late event with an earlier time moves a session's started_at; a second
-- NUDGE_SHOWN a nudge event's shown_at). Forward only.
--
-- One row per move: the record (kind 'session' or 'nudge', its id), the position it left
-- (old_at, Unix ms) and the walk revision of the transaction that moved it. A walk fixes the
-- revision on its first page; a record moved after that revision is walked at the position of
-- its first such move, where it stood when the walk began (server/src/store/queries/reads.rs,
-- "walks when records move"). Rows go with the purge once old_at is past retention.
CREATE TABLE walk_moves (
    site   TEXT   NOT NULL,
    mode   TEXT   NOT NULL,
    kind   TEXT   NOT NULL,
    id     TEXT   NOT NULL,
    rev    INTEGER NOT NULL,
    old_at INTEGER NOT NULL,
    PRIMARY KEY (site, mode, kind, id, rev)
) WITHOUT ROWID;
-- The moves after a walk's revision, in order.
CREATE INDEX walk_moves_by_rev ON walk_moves (site, mode, kind, rev);

-- The walk revision of each site and mode: one more for each transaction that moves records.
-- The moving transaction holds this row until it commits (PostgreSQL's row lock, SQLite's one
-- writer), so revisions commit in order and a reader that sees revision R sees every move up
-- to R.
CREATE TABLE walk_revs (
    site TEXT   NOT NULL,
    mode TEXT   NOT NULL,
    rev  INTEGER NOT NULL,
    PRIMARY KEY (site, mode)
) WITHOUT ROWID;
