// The WASI imports an agent's core module references but never needs, replaced by functions of
// its own that answer exactly as the host's deny-by-default WASI does.
//
// It owns rewriting the core module (before it is made a component): the imports below leave
// it, a function for each is appended, and every reference to the import (calls, the table's
// elements, exports, names) is moved to that function. It must not stub anything whose answer
// depends on the host's state or on the call: only what the host answers the same way to every
// guest on every call (`host/sandbox/src/guest.rs`, `guest_wasi`): no environment variables,
// no terminal, a stdin that is never read.
//
// Why: wasmtime's instantiation works per imported function (it builds each one's trampoline
// and looks up its place), and std and wasi-libc reference these whether or not they are ever
// called (`isatty`, `getenv`, stdin's descriptor). An agent imports 22 functions; without these
// 8 it imports 14, and a whole sandboxed call costs 0.7-1.05 us less (BENCHMARKS.md, issue 38).
//
// Shared with sdk/build's build script through `include!`: keep this file free of `use`.

/// A stubbed import's answer, in the canonical ABI's core form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StubAnswer {
    /// `list<tuple<string, string>>` through a return pointer: an empty list, the host's
    /// environment for a guest. As the host lowers it: the pointer is what the module's own
    /// import realloc (`cabi_import_realloc`, else `cabi_realloc`) returns for 0 bytes at
    /// alignment 4, called as the host calls it, and the length is 0.
    EmptyList,
    /// `option<own<…>>` through a return pointer: `none` (discriminant byte 0). The host's
    /// stdin is closed and its stdout and stderr are pipes: none is a terminal.
    NoneOption,
    /// A resource's drop: nothing to do, the handle was never the host's (see `StdinHandle` and
    /// `NoneOption`).
    Nothing,
    /// `own<input-stream>` returned directly: [`STDIN_HANDLE`]. Stubbed only when the module
    /// imports no function that reads, polls or splices an input stream, and nothing that could
    /// hand it another input stream (files, sockets, HTTP): then the only input stream it can
    /// hold is stdin's, which it can only drop (by the `Nothing` stub).
    StdinHandle,
}

/// The handle the stubbed `get-stdin` returns. A handle is an index in the guest's handle
/// table, which starts at 1; this one never reaches the host (see [`StubAnswer::StdinHandle`]).
pub const STDIN_HANDLE: i32 = 1;

/// The alignment the host asks the realloc for when it lowers the environment's empty list: a
/// `tuple<string, string>`'s, two pointers and two lengths of 4 bytes.
pub const ENVIRONMENT_ALIGN_BYTES: i32 = 4;

/// The custom sections (by name prefix) that refer to functions by index or to code by offset,
/// which the rewrite does not move: DWARF and the branch-hinting proposal's.
pub const INDEXED_CUSTOM_SECTIONS: [&str; 2] = [".debug_", "metadata.code."];

/// The exports the host lowers imports' lists through, in wit-component's order of preference.
pub const IMPORT_REALLOCS: [&str; 2] = ["cabi_import_realloc", "cabi_realloc"];

/// One import to stub: its interface (the module name before `@`, any `0.2.x` version), its
/// function name, its core signature (params, results; every value an `i32`) and its answer.
#[derive(Debug, Clone, Copy)]
pub struct Stub {
    pub interface: &'static str,
    pub name: &'static str,
    pub params: usize,
    pub results: usize,
    pub answer: StubAnswer,
}

/// Every import this rewrite may stub.
pub const STUBS: [Stub; 8] = [
    Stub {
        interface: "wasi:cli/environment",
        name: "get-environment",
        params: 1,
        results: 0,
        answer: StubAnswer::EmptyList,
    },
    Stub {
        interface: "wasi:cli/terminal-stdin",
        name: "get-terminal-stdin",
        params: 1,
        results: 0,
        answer: StubAnswer::NoneOption,
    },
    Stub {
        interface: "wasi:cli/terminal-stdout",
        name: "get-terminal-stdout",
        params: 1,
        results: 0,
        answer: StubAnswer::NoneOption,
    },
    Stub {
        interface: "wasi:cli/terminal-stderr",
        name: "get-terminal-stderr",
        params: 1,
        results: 0,
        answer: StubAnswer::NoneOption,
    },
    Stub {
        interface: "wasi:cli/terminal-input",
        name: "[resource-drop]terminal-input",
        params: 1,
        results: 0,
        answer: StubAnswer::Nothing,
    },
    Stub {
        interface: "wasi:cli/terminal-output",
        name: "[resource-drop]terminal-output",
        params: 1,
        results: 0,
        answer: StubAnswer::Nothing,
    },
    Stub {
        interface: "wasi:cli/stdin",
        name: "get-stdin",
        params: 0,
        results: 1,
        answer: StubAnswer::StdinHandle,
    },
    Stub {
        interface: "wasi:io/streams",
        name: "[resource-drop]input-stream",
        params: 1,
        results: 0,
        answer: StubAnswer::Nothing,
    },
];

/// Why a core module could not be rewritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StubError {
    /// The module given, or the one written, is not valid WebAssembly.
    Invalid {
        stage: &'static str,
        message: String,
    },
    /// An import named as one to stub has another signature than its interface's: a WASI this
    /// rewrite does not know.
    Signature {
        module: String,
        name: String,
        params: usize,
        results: usize,
    },
    /// An import to stub is there, and the module has no memory for its answer to go to.
    NoMemory { module: String, name: String },
    /// An import to stub returns a list, and the module exports no realloc to put it in (the
    /// host could not lower it either).
    NoRealloc { module: String, name: String },
    /// Imports to stub are there, and the module defines no function to append the stubs to.
    NoFunctions,
    /// A custom section that holds function indices or code offsets the rewrite would not
    /// move (DWARF, branch hints): it would be left wrong.
    IndexedCustomSection { name: String },
}

impl std::fmt::Display for StubError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StubError::Invalid { stage, message } => {
                write!(
                    f,
                    "the {stage} core module is not valid WebAssembly: {message}"
                )
            }
            StubError::Signature {
                module,
                name,
                params,
                results,
            } => write!(
                f,
                "{module} {name} has {params} params and {results} results, not its \
                 interface's signature: a WASI these stubs do not know"
            ),
            StubError::NoMemory { module, name } => write!(
                f,
                "{module} {name} answers through memory and the module has none"
            ),
            StubError::NoRealloc { module, name } => write!(
                f,
                "{module} {name} returns a list and the module exports neither {}",
                IMPORT_REALLOCS.join(" nor ")
            ),
            StubError::NoFunctions => {
                write!(f, "the module defines no function to append the stubs to")
            }
            StubError::IndexedCustomSection { name } => write!(
                f,
                "its custom section {name} holds indices or code offsets these stubs would \
                 leave wrong (build without debug info)"
            ),
        }
    }
}

impl std::error::Error for StubError {}

/// What the rewrite did: the module and the imports it stubbed (`module name`), in their order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stubbed {
    pub module: Vec<u8>,
    pub stubbed: Vec<String>,
}

/// The stub for an import, if it is one to stub: its interface at a `0.2.x` version.
pub fn stub_for(module: &str, name: &str) -> Option<&'static Stub> {
    let (interface, version) = module.split_once('@')?;
    let patch = version.strip_prefix("0.2.")?;
    if patch.is_empty() || !patch.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    STUBS
        .iter()
        .find(|stub| stub.interface == interface && stub.name == name)
}

/// Whether an import uses an input stream (reads, polls or splices one) or could hand the
/// module one other than stdin's (a file's, a socket's, an HTTP body's): then stdin's handle
/// must be the host's, and neither `get-stdin` nor the input stream's drop is stubbed.
fn uses_input_stream(module: &str, name: &str) -> bool {
    let reads = module.starts_with("wasi:io/streams@")
        && name != "[resource-drop]input-stream"
        && (name.contains("input-stream") || name.contains("splice"));
    let other_sources = ["wasi:filesystem/", "wasi:sockets/", "wasi:http/"];
    reads
        || other_sources
            .iter()
            .any(|source| module.starts_with(source))
}

/// Rewrites `core` with [`STUBS`]' imports replaced by functions that answer as the host does.
/// A module that imports none of them comes back unchanged.
pub fn stub_unused_wasi(core: &[u8]) -> Result<Stubbed, StubError> {
    let invalid = |stage: &'static str| {
        move |e: wasmparser::BinaryReaderError| StubError::Invalid {
            stage,
            message: e.to_string(),
        }
    };
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(core)
        .map_err(invalid("given"))?;

    // First pass: the function types (params, results, whether every value is an i32), the
    // function imports, how many functions are defined, whether there is a memory, and the
    // import realloc's index.
    let mut types: Vec<(usize, usize, bool)> = Vec::new();
    let mut imports: Vec<(String, String, u32)> = Vec::new();
    let mut defined = 0u32;
    let mut has_memory = false;
    let mut reallocs: Vec<(usize, u32)> = Vec::new();
    let mut indexed_custom: Option<String> = None;
    for payload in wasmparser::Parser::new(0).parse_all(core) {
        match payload.map_err(invalid("given"))? {
            wasmparser::Payload::TypeSection(reader) => {
                for ty in reader.into_iter_err_on_gc_types() {
                    let ty = ty.map_err(invalid("given"))?;
                    let all_i32 = ty
                        .params()
                        .iter()
                        .chain(ty.results())
                        .all(|t| *t == wasmparser::ValType::I32);
                    types.push((ty.params().len(), ty.results().len(), all_i32));
                }
            }
            wasmparser::Payload::ImportSection(reader) => {
                for import in reader.into_imports() {
                    let import = import.map_err(invalid("given"))?;
                    match import.ty {
                        wasmparser::TypeRef::Func(ty) | wasmparser::TypeRef::FuncExact(ty) => {
                            imports.push((import.module.to_owned(), import.name.to_owned(), ty))
                        }
                        wasmparser::TypeRef::Memory(_) => has_memory = true,
                        _ => {}
                    }
                }
            }
            wasmparser::Payload::FunctionSection(reader) => defined = reader.count(),
            wasmparser::Payload::MemorySection(reader) => has_memory |= reader.count() > 0,
            wasmparser::Payload::CustomSection(reader)
                if INDEXED_CUSTOM_SECTIONS
                    .iter()
                    .any(|prefix| reader.name().starts_with(prefix)) =>
            {
                indexed_custom = Some(reader.name().to_owned());
            }
            wasmparser::Payload::ExportSection(reader) => {
                for export in reader {
                    let export = export.map_err(invalid("given"))?;
                    let preference = IMPORT_REALLOCS.iter().position(|n| *n == export.name);
                    if let (wasmparser::ExternalKind::Func, Some(preference)) =
                        (export.kind, preference)
                    {
                        reallocs.push((preference, export.index));
                    }
                }
            }
            _ => {}
        }
    }
    let keeps_stdin = imports
        .iter()
        .any(|(module, name, _)| uses_input_stream(module, name));
    let mut to_stub: Vec<(usize, &'static Stub)> = Vec::new();
    for (index, (module, name, ty)) in imports.iter().enumerate() {
        let Some(stub) = stub_for(module, name) else {
            continue;
        };
        let stdin_side = stub.answer == StubAnswer::StdinHandle
            || (stub.answer == StubAnswer::Nothing && stub.name.ends_with("input-stream"));
        if stdin_side && keeps_stdin {
            continue;
        }
        let (params, results, all_i32) =
            types
                .get(*ty as usize)
                .copied()
                .unwrap_or((usize::MAX, 0, false));
        if (params, results, all_i32) != (stub.params, stub.results, true) {
            return Err(StubError::Signature {
                module: module.clone(),
                name: name.clone(),
                params,
                results,
            });
        }
        let writes_memory = matches!(stub.answer, StubAnswer::EmptyList | StubAnswer::NoneOption);
        if writes_memory && !has_memory {
            return Err(StubError::NoMemory {
                module: module.clone(),
                name: name.clone(),
            });
        }
        if stub.answer == StubAnswer::EmptyList && reallocs.is_empty() {
            return Err(StubError::NoRealloc {
                module: module.clone(),
                name: name.clone(),
            });
        }
        to_stub.push((index, stub));
    }
    if to_stub.is_empty() {
        return Ok(Stubbed {
            module: core.to_vec(),
            stubbed: Vec::new(),
        });
    }
    if defined == 0 {
        return Err(StubError::NoFunctions);
    }
    if let Some(name) = indexed_custom {
        return Err(StubError::IndexedCustomSection { name });
    }

    // The new function index of every old one: kept imports first, in order; then the defined
    // functions; then a stub for each stubbed import, in the imports' order.
    let kept = (imports.len() - to_stub.len()) as u32;
    let mut map = Vec::with_capacity(imports.len() + defined as usize);
    let mut next_kept = 0u32;
    let mut next_stub = kept + defined;
    for index in 0..imports.len() {
        if to_stub.iter().any(|(stubbed, _)| *stubbed == index) {
            map.push(next_stub);
            next_stub += 1;
        } else {
            map.push(next_kept);
            next_kept += 1;
        }
    }
    map.extend((0..defined).map(|i| kept + i));
    // The import realloc, moved: the empty list's stub calls it as the host does. The module
    // was validated, so an exported function's index is in the map.
    reallocs.sort();
    let realloc = reallocs
        .first()
        .map(|(_, old)| map.get(*old as usize).copied().unwrap_or(*old));

    let mut stubber = Stubber {
        map,
        stubs: to_stub
            .iter()
            .map(|(index, stub)| (imports[*index].2, stub.answer))
            .collect(),
        stubbed: to_stub.iter().map(|(index, _)| *index).collect(),
        import_index: 0,
        realloc,
    };
    let mut module = wasm_encoder::Module::new();
    wasm_encoder::reencode::Reencode::parse_core_module(
        &mut stubber,
        &mut module,
        wasmparser::Parser::new(0),
        core,
    )
    // Writing cannot fail (the reencoder's error is `Infallible`): only reading the given
    // module can.
    .map_err(|e| StubError::Invalid {
        stage: "given",
        message: e.to_string(),
    })?;
    let module = module.finish();
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&module)
        .map_err(invalid("rewritten"))?;
    Ok(Stubbed {
        module,
        stubbed: to_stub
            .iter()
            .map(|(index, _)| format!("{} {}", imports[*index].0, imports[*index].1))
            .collect(),
    })
}

/// The reencoder: drops the stubbed imports, moves every function index, appends the stubs.
struct Stubber {
    /// Old function index → new.
    map: Vec<u32>,
    /// Each stub's type index and answer, in the order they are appended.
    stubs: Vec<(u32, StubAnswer)>,
    /// The stubbed imports' positions among the module's function imports.
    stubbed: Vec<usize>,
    /// The position of the next function import read.
    import_index: usize,
    /// The import realloc's new index, if the module exports one.
    realloc: Option<u32>,
}

impl wasm_encoder::reencode::Reencode for Stubber {
    type Error = std::convert::Infallible;

    fn function_index(
        &mut self,
        func: u32,
    ) -> Result<u32, wasm_encoder::reencode::Error<Self::Error>> {
        // The module was validated: every index it uses is in the map.
        Ok(self.map.get(func as usize).copied().unwrap_or(func))
    }

    fn parse_import_section(
        &mut self,
        section_out: &mut wasm_encoder::ImportSection,
        section: wasmparser::ImportSectionReader<'_>,
    ) -> Result<(), wasm_encoder::reencode::Error<Self::Error>> {
        for import in section.into_imports() {
            let import = import?;
            let is_func = matches!(
                import.ty,
                wasmparser::TypeRef::Func(_) | wasmparser::TypeRef::FuncExact(_)
            );
            if is_func {
                let index = self.import_index;
                self.import_index += 1;
                if self.stubbed.contains(&index) {
                    continue;
                }
            }
            wasm_encoder::reencode::utils::parse_import(self, section_out, import)?;
        }
        Ok(())
    }

    fn parse_function_section(
        &mut self,
        functions: &mut wasm_encoder::FunctionSection,
        section: wasmparser::FunctionSectionReader<'_>,
    ) -> Result<(), wasm_encoder::reencode::Error<Self::Error>> {
        wasm_encoder::reencode::utils::parse_function_section(self, functions, section)?;
        for (ty, _) in &self.stubs {
            functions.function(*ty);
        }
        Ok(())
    }

    fn parse_code_section(
        &mut self,
        code: &mut wasm_encoder::CodeSection,
        section: wasmparser::CodeSectionReader<'_>,
    ) -> Result<(), wasm_encoder::reencode::Error<Self::Error>> {
        wasm_encoder::reencode::utils::parse_code_section(self, code, section)?;
        for (_, answer) in &self.stubs {
            code.function(&stub_body(*answer, self.realloc));
        }
        Ok(())
    }

    fn parse_custom_name_subsection(
        &mut self,
        names: &mut wasm_encoder::NameSection,
        section: wasmparser::Name<'_>,
    ) -> Result<(), wasm_encoder::reencode::Error<Self::Error>> {
        // A name map must be in index order, and the stubs moved from the front to the end.
        match section {
            wasmparser::Name::Function(map) => {
                let mut sorted = Vec::new();
                for naming in map {
                    let naming = naming?;
                    let index =
                        wasm_encoder::reencode::Reencode::function_index(self, naming.index)?;
                    sorted.push((index, naming.name));
                }
                sorted.sort_by_key(|(index, _)| *index);
                let mut out = wasm_encoder::NameMap::new();
                for (index, name) in sorted {
                    out.append(index, name);
                }
                names.functions(&out);
            }
            wasmparser::Name::Local(map) => names.locals(&self.indirect(map)?),
            wasmparser::Name::Label(map) => names.labels(&self.indirect(map)?),
            other => {
                wasm_encoder::reencode::utils::parse_custom_name_subsection(self, names, other)?
            }
        }
        Ok(())
    }
}

impl Stubber {
    /// A per-function name map (locals, labels) with the functions moved, in index order.
    fn indirect(
        &mut self,
        map: wasmparser::IndirectNameMap<'_>,
    ) -> Result<
        wasm_encoder::IndirectNameMap,
        wasm_encoder::reencode::Error<std::convert::Infallible>,
    > {
        let mut sorted = Vec::new();
        for naming in map {
            let naming = naming?;
            let mut inner = wasm_encoder::NameMap::new();
            for name in naming.names {
                let name = name?;
                inner.append(name.index, name.name);
            }
            let index = wasm_encoder::reencode::Reencode::function_index(self, naming.index)?;
            sorted.push((index, inner));
        }
        sorted.sort_by_key(|(index, _)| *index);
        let mut out = wasm_encoder::IndirectNameMap::new();
        for (index, inner) in &sorted {
            out.append(*index, inner);
        }
        Ok(out)
    }
}

/// A stub's body: its answer written where the canonical ABI reads it. `realloc` is the import
/// realloc's index (checked present when an `EmptyList` stub is made).
fn stub_body(answer: StubAnswer, realloc: Option<u32>) -> wasm_encoder::Function {
    let mut body = wasm_encoder::Function::new([]);
    let at_return_pointer = |offset: u64, align: u32| wasm_encoder::MemArg {
        offset,
        align,
        memory_index: 0,
    };
    match answer {
        StubAnswer::EmptyList => {
            // The list's pointer, from realloc(0, 0, 4, 0) as the host calls it, then its
            // length 0: two i32s at the return pointer (4-aligned).
            body.instruction(&wasm_encoder::Instruction::LocalGet(0));
            for arg in [0, 0, ENVIRONMENT_ALIGN_BYTES, 0] {
                body.instruction(&wasm_encoder::Instruction::I32Const(arg));
            }
            body.instruction(&wasm_encoder::Instruction::Call(realloc.unwrap_or(0)));
            body.instruction(&wasm_encoder::Instruction::I32Store(at_return_pointer(
                0, 2,
            )));
            body.instruction(&wasm_encoder::Instruction::LocalGet(0));
            body.instruction(&wasm_encoder::Instruction::I32Const(0));
            body.instruction(&wasm_encoder::Instruction::I32Store(at_return_pointer(
                4, 2,
            )));
        }
        StubAnswer::NoneOption => {
            body.instruction(&wasm_encoder::Instruction::LocalGet(0));
            body.instruction(&wasm_encoder::Instruction::I32Const(0));
            body.instruction(&wasm_encoder::Instruction::I32Store8(at_return_pointer(
                0, 0,
            )));
        }
        StubAnswer::Nothing => {}
        StubAnswer::StdinHandle => {
            body.instruction(&wasm_encoder::Instruction::I32Const(STDIN_HANDLE));
        }
    }
    body.instruction(&wasm_encoder::Instruction::End);
    body
}

#[cfg(test)]
mod tests;
