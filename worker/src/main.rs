fn main() -> std::process::ExitCode {
    worker::main()
}
