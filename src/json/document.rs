//! Reading a whole input document other than the config and the request (docs/contract/as-code.md's scenario
//! files and recorded sessions): a size limit, strict parsing, every finding placed.

use serde_json::Value;

use super::{Findings, parse};
use crate::code::DiagnosticCode;
use crate::error::{Diagnostic, Error, ErrorKind};
use crate::text::{binary_size, group};

/// An input document's kind of error, its name in messages ("scenario file") and its size limit
/// in bytes.
pub(crate) struct Document {
    pub(crate) kind: ErrorKind,
    pub(crate) what: &'static str,
    pub(crate) max_bytes: usize,
}

impl Document {
    /// Reads text: at most `max_bytes`, strict JSON, then `read` over the tree; every finding is
    /// placed at its line and column.
    ///
    /// # Errors
    ///
    /// - `kind` with every finding, or the size or syntax error alone.
    pub(crate) fn read_text<T>(
        &self,
        text: &str,
        read: impl FnOnce(&Value, &mut Findings) -> Option<T>,
    ) -> Result<T, Error> {
        self.check_size(text.len())?;
        let value = parse(text).map_err(|d| Error::new(self.kind, vec![d]))?;
        let mut read = Some(read);
        let mut out = None;
        self.finish(&value, Some(text), &mut |v, f| {
            out = read.take().and_then(|read| read(v, f));
        })?;
        out.ok_or_else(|| self.unread())
    }

    /// Reads a tree already parsed (a JS object in the WASM package); the size limit applies to
    /// its compact JSON text; diagnostics have no line and column.
    ///
    /// # Errors
    ///
    /// - As [`Document::read_text`], without syntax errors.
    pub(crate) fn read_value<T>(
        &self,
        value: &Value,
        read: impl FnOnce(&Value, &mut Findings) -> Option<T>,
    ) -> Result<T, Error> {
        self.check_size(value.to_string().len())?;
        let mut read = Some(read);
        let mut out = None;
        self.finish(value, None, &mut |v, f| {
            out = read.take().and_then(|read| read(v, f));
        })?;
        out.ok_or_else(|| self.unread())
    }

    /// The `input_too_large` error for `len` bytes over the limit.
    ///
    /// # Errors
    ///
    /// - When `len` is over `max_bytes`.
    pub(crate) fn check_size(&self, len: usize) -> Result<(), Error> {
        if len <= self.max_bytes {
            return Ok(());
        }
        Err(Error::new(
            self.kind,
            vec![Diagnostic::error(
                DiagnosticCode::InputTooLarge,
                String::new(),
                msg!(
                    "{} is {} bytes; the limit is {} ({} bytes)",
                    self.what,
                    group(len as u64),
                    binary_size(self.max_bytes),
                    group(self.max_bytes as u64)
                ),
            )],
        ))
    }

    /// Runs `read` and places its findings; not generic, so that its code is in the module once.
    fn finish(
        &self,
        value: &Value,
        text: Option<&str>,
        read: &mut dyn FnMut(&Value, &mut Findings),
    ) -> Result<(), Error> {
        let mut findings = Findings::default();
        read(value, &mut findings);
        if findings.is_empty() {
            Ok(())
        } else {
            Err(Error::new(self.kind, findings.into_diagnostics(text)))
        }
    }

    /// A reader that gave nothing without a finding (it does not happen: readers report why).
    fn unread(&self) -> Error {
        Error::new(self.kind, Vec::new())
    }
}
