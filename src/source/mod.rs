//! Input readers: where a skill's files come from before they are validated. A directory on disk
//! (import, `publish`), one commit of a Git repository (`import git`, `sync`), an uploaded
//! archive (REST), and the seed skills embedded in the binary.
//! Each yields [`InputFile`](crate::core::InputFile)s; validation is `core`'s, storing is the
//! registry's. Nothing here touches storage or a transport.

pub mod archive;
pub mod dir;
pub mod git;
pub mod seed;

pub use archive::{ArchiveError, ExportFile};
pub use dir::{Candidate, ReadError};
