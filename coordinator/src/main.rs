fn main() -> std::process::ExitCode {
    coordinator::cli::main()
}
