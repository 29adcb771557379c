//! aura's plugins on disk: what the host may load, and proof of where it came from.
//!
//! It owns a plugins dir (its manifest, the component files it lists by digest, opened through
//! cap-std and bounded in size: [`PluginsDir`]), writing one ([`write_components`],
//! [`write_precompiled`]), a file checked by its digest and kept open so that what is mapped is
//! what was checked ([`CheckedFile`]), plugin signatures and the keys a build trusts
//! ([`signing`]), the compilation cache of compiled code ([`code_cache`]), and the durable,
//! bounded file operations every record writer of the host shares ([`files`]). It must not
//! compile or run anything (the sandbox does) nor decide which agents exist (the catalogue
//! does).

mod checked;
pub mod code_cache;
mod dir;
mod error;
pub mod files;
mod manifest;
pub mod signing;

pub use checked::CheckedFile;
pub use dir::{PluginsDir, sign_dir};
pub use error::{PluginError, PrecompiledRefusal};
pub use manifest::{
    ComponentEntry, MANIFEST_FILE, MANIFEST_FORMAT, NARRATOR_COMPONENT, PluginManifest,
    Precompiled, write_components, write_precompiled,
};
