//! The config versions (docs/contract/versions.md): one version, the history, the latest of each site and mode,
//! and a publish (the `If-Match` check and the insert in one transaction).

macro_rules! versions {
    ($db:ty, $row:ty, $group:literal, $array:literal, $json_pages:literal) => {
        fn read_version(row: &$row, with_config: bool) -> Result<ConfigVersion, sqlx::Error> {
            Ok(ConfigVersion {
                version: row.try_get("version")?,
                published_at_ms: row.try_get("published_at")?,
                published_by: row.try_get("published_by")?,
                message: row.try_get("message")?,
                sha256: row.try_get("sha256")?,
                restores: row.try_get("restores")?,
                config: if with_config { Some(row.try_get("config")?) } else { None },
            })
        }

        pub(crate) async fn config_version(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            version: Option<i64>,
        ) -> Result<Option<ConfigVersion>, StoreError> {
            let sql = match version {
                Some(_) => format!("SELECT {VERSION_COLUMNS}, config FROM config_versions WHERE site = $1 AND mode = $2 AND version = $3"),
                None => format!("SELECT {VERSION_COLUMNS}, config FROM config_versions WHERE site = $1 AND mode = $2 AND version >= $3 ORDER BY version DESC LIMIT 1"),
            };
            let row = sqlx::query(&sql)
                .bind(&scope.site)
                .bind(scope.mode.as_str())
                .bind(version.unwrap_or(0))
                .fetch_optional(&mut *conn)
                .await?;
            Ok(row.as_ref().map(|r| read_version(r, true)).transpose()?)
        }

        pub(crate) async fn list_versions(
            conn: &mut <$db as sqlx::Database>::Connection,
            scope: &Scope,
            before: Option<i64>,
            limit: u32,
        ) -> Result<Vec<ConfigVersion>, StoreError> {
            let rows = sqlx::query(&format!(
                "SELECT {VERSION_COLUMNS} FROM config_versions WHERE site = $1 AND mode = $2 AND version < $3 \
                 ORDER BY version DESC LIMIT $4"
            ))
            .bind(&scope.site)
            .bind(scope.mode.as_str())
            .bind(before.unwrap_or(i64::MAX))
            .bind(limit_param(limit))
            .fetch_all(&mut *conn)
            .await?;
            Ok(rows.iter().map(|r| read_version(r, false)).collect::<Result<Vec<_>, _>>()?)
        }

        pub(crate) async fn latest_versions(conn: &mut <$db as sqlx::Database>::Connection) -> Result<Vec<(String, String, i64)>, StoreError> {
            let rows = sqlx::query("SELECT site, mode, MAX(version) AS version FROM config_versions GROUP BY site, mode")
                .fetch_all(&mut *conn)
                .await?;
            Ok(rows
                .iter()
                .map(|r| Ok((r.try_get("site")?, r.try_get("mode")?, r.try_get("version")?)))
                .collect::<Result<Vec<_>, sqlx::Error>>()?)
        }

        pub(crate) async fn publish(
            pool: &Pool<$db>,
            scope: &Scope,
            expected: Option<i64>,
            new: &NewVersion<'_>,
        ) -> Result<Published, StoreError> {
            let mut tx = pool.begin().await?;
            let latest = format!(
                "SELECT {VERSION_COLUMNS} FROM config_versions WHERE site = $1 AND mode = $2 ORDER BY version DESC LIMIT 1"
            );
            let latest_row = sqlx::query(&latest)
                .bind(&scope.site)
                .bind(scope.mode.as_str())
                .fetch_optional(&mut *tx)
                .await?;
            let latest_version = latest_row.as_ref().map(|r| read_version(r, false)).transpose()?;
            let current = latest_version.as_ref().map(|v| v.version);
            if current != expected {
                return Ok(Published::Stale { current: latest_version });
            }
            if let Some(restores) = new.restores {
                let found = sqlx::query("SELECT version FROM config_versions WHERE site = $1 AND mode = $2 AND version = $3")
                    .bind(&scope.site)
                    .bind(scope.mode.as_str())
                    .bind(restores)
                    .fetch_optional(&mut *tx)
                    .await?;
                if found.is_none() {
                    return Ok(Published::NoSuchVersion(restores));
                }
            }
            let version = current.unwrap_or(0) + 1;
            // Two publishers who both read `current` race here: the primary key lets one in;
            // the other inserts nothing and is told its version is stale.
            let row = sqlx::query(&format!(
                "INSERT INTO config_versions (site, mode, {VERSION_COLUMNS}, config) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (site, mode, version) DO NOTHING RETURNING version"
            ))
            .bind(&scope.site)
            .bind(scope.mode.as_str())
            .bind(version)
            .bind(new.published_at_ms)
            .bind(new.published_by)
            .bind(new.message)
            .bind(new.sha256)
            .bind(new.restores)
            .bind(new.config)
            .fetch_optional(&mut *tx)
            .await?;
            if row.is_none() {
                // The version the other publisher stored (committed: the insert waited for it).
                let winner = sqlx::query(&latest)
                    .bind(&scope.site)
                    .bind(scope.mode.as_str())
                    .fetch_optional(&mut *tx)
                    .await?;
                let winner = winner.as_ref().map(|r| read_version(r, false)).transpose()?;
                return Ok(Published::Stale { current: winner });
            }
            let published = ConfigVersion {
                version,
                published_at_ms: new.published_at_ms,
                published_by: new.published_by.to_owned(),
                message: new.message.map(str::to_owned),
                sha256: new.sha256.to_owned(),
                restores: new.restores,
                config: Some(new.config.to_owned()),
            };
            outbox_of_version(&mut tx, scope, &published).await?;
            tx.commit().await?;
            Ok(Published::Version(published))
        }
    };
}
