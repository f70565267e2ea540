//! The code the book shows, chapter by chapter. The book includes these
//! files by anchor, so every snippet it prints is compiled and tested here.

mod arguments;
mod builtins;
mod casting;
mod catalogs;
mod context;
mod dialects;
mod mcp;
mod outputs;
mod running;
mod testing;
