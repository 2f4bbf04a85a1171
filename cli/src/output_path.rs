//! Checks on an OUTPUT path, made before any work: it names a file, it is
//! none of the command's inputs, and (for `bake`) its directory takes new
//! files.

use anyhow::{Context, Result, bail};
use std::path::Path;

/// Whether `a` and `b` name the same existing file (after symbolic links;
/// a hard link is the same file too). False when either does not exist.
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(ma), Ok(mb)) => ma.dev() == mb.dev() && ma.ino() == mb.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(ca), Ok(cb)) => ca == cb,
            _ => false,
        }
    }
}

/// Refuses an `output` that is one of `inputs`, each given with the words
/// that name it in the error (e.g. "INPUT level.obj"): writing OUTPUT would
/// destroy that input.
pub fn refuse_inputs<'a>(output: &Path, inputs: impl IntoIterator<Item = (String, &'a Path)>) -> Result<()> {
    for (what, input) in inputs {
        if same_file(output, input) {
            bail!("refusing to write {}: it is the same file as {what}", output.display());
        }
    }
    Ok(())
}

/// Refuses an `output` that is a directory or ends with a path separator,
/// then checks that a file can be created next to it
/// ([`walksurf_bake::check_writable`]): a missing or read-only directory is
/// reported before a bake starts.
pub fn check_writable_file(output: &Path) -> Result<()> {
    if output.is_dir() {
        bail!("{}: is a directory; OUTPUT must name a file", output.display());
    }
    let text = output.as_os_str().to_string_lossy();
    if text.chars().next_back().is_some_and(std::path::is_separator) {
        bail!(
            "{}: ends with a path separator; OUTPUT must name a file",
            output.display()
        );
    }
    walksurf_bake::check_writable(output).with_context(|| format!("writing {}", output.display()))
}
