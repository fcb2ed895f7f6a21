package sheets

// SetWriterPID makes a store name another process as its journal entries' writer: a test
// that wants a writer provably gone names a process that has exited.
func SetWriterPID(s *Store, pid int) { s.writer.PID = pid }
