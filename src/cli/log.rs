//! The log: records on stderr (stdout carries MCP in stdio mode), filtered by `SKILLREG_LOG`,
//! each at most [`MAX_LOG_RECORD`] bytes, written in batches by a thread of their own.

use std::fmt;

use tracing::field::Field;
use tracing_subscriber::field::MakeExt as _;
use tracing_subscriber::fmt::format::{Writer, debug_fn};

use crate::config::LogFormat;

/// The log filter when `SKILLREG_LOG` is not set. rmcp logs whole requests at INFO (an
/// `initialize` with its `clientInfo`), so a client could write megabytes of log per request:
/// only its warnings and errors are kept.
pub const DEFAULT_LOG_FILTER: &str = "info,rmcp=warn,sqlx::postgres::notice=warn";

/// The longest log record written as is. A longer one (a dependency's warning quoting a
/// request header, say) is cut to its first [`LOG_RECORD_KEPT`] bytes, so that no request can
/// write more than this to the log whatever the filter lets through.
pub const MAX_LOG_RECORD: usize = 16 * 1024;

/// What is kept of a record longer than [`MAX_LOG_RECORD`].
const LOG_RECORD_KEPT: usize = 1024;

/// How long a log record may wait before it is written.
const LOG_FLUSH_EVERY: std::time::Duration = std::time::Duration::from_millis(5);
/// Bytes of records waiting at most: past this, the next record writes them all itself.
const LOG_BUFFER_BYTES: usize = 1 << 20;

/// Set up logging on stderr (stdout carries MCP in stdio mode). `SKILLREG_LOG` filters
/// (default [`DEFAULT_LOG_FILTER`]); each record is at most [`MAX_LOG_RECORD`] bytes. Records
/// are written in order, in batches, by a thread of their own (see [`LogBuffer`]); keep the
/// guard until the process ends: dropping it writes what is left.
pub fn init_logging(format: LogFormat) -> LogGuard {
    let filter = tracing_subscriber::EnvFilter::try_from_env("SKILLREG_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER));
    let buffer = LogBuffer::start();
    // Colours only for a person at a terminal: escape codes in a log file or a collector are
    // noise to whoever reads it. Without them the fields are written by [`plain_field`].
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let builder = tracing_subscriber::fmt()
        .with_writer(BoundedStderr {
            json: format == LogFormat::Json,
            buffer: buffer.clone(),
        })
        .with_ansi(ansi)
        .with_env_filter(filter);
    let _ = match (format, ansi) {
        (LogFormat::Human, true) => builder.try_init(),
        (LogFormat::Human, false) => builder
            .fmt_fields(debug_fn(plain_field).delimited(" "))
            .try_init(),
        (LogFormat::Json, _) => builder.json().flatten_event(true).try_init(),
    };
    LogGuard(buffer)
}

/// Writes the log records still waiting when dropped.
#[must_use = "dropping the guard writes the waiting log records; keep it until the end"]
pub struct LogGuard(std::sync::Arc<LogBuffer>);

impl Drop for LogGuard {
    fn drop(&mut self) {
        self.0.flush();
    }
}

/// Log records waiting to be written to stderr. A request appends its record under a lock and
/// goes on: no system call and no thread to wake (a per-request `write` to stderr cost several
/// percent of a small read's CPU); a thread writes whatever has gathered every
/// [`LOG_FLUSH_EVERY`], so under load one `write` carries many records. When
/// [`LOG_BUFFER_BYTES`] are waiting (stderr not keeping up), the next record writes them itself.
struct LogBuffer {
    waiting: std::sync::Mutex<Vec<u8>>,
    /// Held while a batch is taken and written, so that batches reach stderr in order.
    writing: std::sync::Mutex<()>,
}

impl LogBuffer {
    fn start() -> std::sync::Arc<Self> {
        let buffer = std::sync::Arc::new(Self {
            waiting: std::sync::Mutex::new(Vec::new()),
            writing: std::sync::Mutex::new(()),
        });
        let weak = std::sync::Arc::downgrade(&buffer);
        let _ = std::thread::Builder::new()
            .name("skillreg-log".to_owned())
            .spawn(move || {
                while let Some(buffer) = weak.upgrade() {
                    buffer.flush();
                    drop(buffer);
                    std::thread::sleep(LOG_FLUSH_EVERY);
                }
            });
        buffer
    }

    fn push(&self, record: &[u8]) {
        let full = {
            let mut waiting = lock(&self.waiting);
            waiting.extend_from_slice(record);
            waiting.len() >= LOG_BUFFER_BYTES
        };
        if full {
            self.flush();
        }
    }

    /// Write every waiting record (a failure to log is nobody's failure to report).
    fn flush(&self) {
        use std::io::Write as _;
        let _writing = lock(&self.writing);
        let batch = std::mem::take(&mut *lock(&self.waiting));
        if !batch.is_empty() {
            let _ = std::io::stderr().lock().write_all(&batch);
        }
    }
}

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Stderr, one record per writer: the fmt layer formats a whole record, then writes it with one
/// `write_all`.
struct BoundedStderr {
    json: bool,
    buffer: std::sync::Arc<LogBuffer>,
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for BoundedStderr {
    type Writer = BoundedRecord<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        BoundedRecord {
            json: self.json,
            buffer: &self.buffer,
        }
    }
}

struct BoundedRecord<'a> {
    json: bool,
    buffer: &'a LogBuffer,
}

impl std::io::Write for BoundedRecord<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.len() <= MAX_LOG_RECORD {
            self.buffer.push(buf);
        } else {
            self.buffer.push(cut_record(buf, self.json).as_bytes());
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A record over [`MAX_LOG_RECORD`] bytes, cut: its beginning and its size, one line (a JSON
/// object when the log is JSON).
fn cut_record(record: &[u8], json: bool) -> String {
    let kept = String::from_utf8_lossy(&record[..LOG_RECORD_KEPT]);
    if json {
        let line = super::output::CutRecord {
            level: "WARN",
            target: "skillreg::log",
            message: "log record cut",
            record_bytes: record.len(),
            record_start: &kept,
        };
        format!("{}\n", super::output::line(&line))
    } else {
        format!(
            "{}… [log record of {} bytes cut]\n",
            kept.trim_end_matches('\n'),
            record.len()
        )
    }
}

/// Writes `name=value` for each field but `message`, which is written as it is (escaping the
/// characters that steer a terminal, as `tracing_subscriber`'s default does), separated by
/// spaces. The same text the default writes with colours off, without painting every name and
/// `=` in an empty style: at one access-log record per request, that painting was a twentieth
/// of a small read's CPU.
fn plain_field(writer: &mut Writer<'_>, field: &Field, value: &dyn fmt::Debug) -> fmt::Result {
    match field.name() {
        "message" => fmt::Write::write_fmt(&mut Unsteered(writer), format_args!("{value:?}")),
        name => write!(
            writer,
            "{}={value:?}",
            name.strip_prefix("r#").unwrap_or(name)
        ),
    }
}

/// Text with the control characters that start terminal escape sequences written as escapes.
struct Unsteered<'a, 'w>(&'a mut Writer<'w>);

impl fmt::Write for Unsteered<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let steers = |c: char| {
            matches!(
                c,
                '\x07' | '\x08' | '\x0c' | '\x1b' | '\x7f' | '\u{80}'..='\u{9f}'
            )
        };
        let mut rest = s;
        while let Some(at) = rest.find(steers) {
            let c = rest[at..].chars().next().expect("found at a character");
            self.0.write_str(&rest[..at])?;
            write!(self.0, "{}", c.escape_unicode())?;
            rest = &rest[at + c.len_utf8()..];
        }
        self.0.write_str(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_log_records_are_cut_to_one_short_line() {
        let record = format!("{}\n", "é".repeat(MAX_LOG_RECORD));
        let human = cut_record(record.as_bytes(), false);
        assert!(human.len() < 2 * LOG_RECORD_KEPT, "{}", human.len());
        assert!(human.ends_with(&format!("[log record of {} bytes cut]\n", record.len())));
        assert_eq!(human.lines().count(), 1);
        let json = cut_record(record.as_bytes(), true);
        let line: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(line["record_bytes"], record.len());
        assert!(json.len() < 2 * LOG_RECORD_KEPT && json.ends_with("}\n"));
    }
}
