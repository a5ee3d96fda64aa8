//! The Verilog of a generated design: one file per module (`<module>.v`, which also keeps
//! Verilator's DECLFILENAME quiet), sub-modules before the modules that instantiate them and
//! the top last, and the file list `<top>.f` that names them in that order.

use std::rc::Rc;

use crate::ir::{Module, SubModule};

/// One module's file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerilogFile {
    /// `<module>.v`
    pub name: String,
    pub text: String,
}

/// Every file of a design, children before parents, the top last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verilog {
    pub files: Vec<VerilogFile>,
}

impl Verilog {
    /// The files of `top` (already emitted as `top_text`) and of every definition below it.
    pub(crate) fn of(top: &Module, top_text: String) -> Verilog {
        let defs: Vec<Rc<SubModule>> = SubModule::closure(&top.children());
        let mut files: Vec<VerilogFile> = defs
            .iter()
            .map(|d| VerilogFile {
                name: format!("{}.v", d.name),
                text: d.verilog.clone(),
            })
            .collect();
        files.push(VerilogFile {
            name: format!("{}.v", top.name),
            text: top_text,
        });
        Verilog { files }
    }

    /// The file names, in order.
    pub fn names(&self) -> Vec<String> {
        self.files.iter().map(|f| f.name.clone()).collect()
    }

    /// The text of `<top>.f`: one file name a line, in order (paths relative to the list).
    pub fn file_list(&self) -> String {
        self.files.iter().map(|f| format!("{}\n", f.name)).collect()
    }

    /// All modules in one text, in file-list order (for a tool run on a single file).
    pub fn text(&self) -> String {
        self.files.iter().map(|f| f.text.as_str()).collect()
    }

    /// Bytes of all files.
    pub fn len(&self) -> usize {
        self.files.iter().map(|f| f.text.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The file named `name` (`<module>.v`), to read or alter (tests that break a design).
    pub fn file_mut(&mut self, name: &str) -> Option<&mut VerilogFile> {
        self.files.iter_mut().find(|f| f.name == name)
    }

    /// Writes every file and `<top>.f` into `dir` through `write(path, text)`; returns the
    /// path of the file list.
    pub fn write_to<Err>(
        &self,
        dir: &std::path::Path,
        top: &str,
        mut write: impl FnMut(&std::path::Path, &str) -> Result<(), Err>,
    ) -> Result<std::path::PathBuf, Err> {
        for f in &self.files {
            write(&dir.join(&f.name), &f.text)?;
        }
        let list = dir.join(format!("{top}.f"));
        write(&list, &self.file_list())?;
        Ok(list)
    }
}
