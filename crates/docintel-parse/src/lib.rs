//! docintel-parse
