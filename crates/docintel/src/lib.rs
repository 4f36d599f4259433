//! docintel
