//! docintel-retrieve
