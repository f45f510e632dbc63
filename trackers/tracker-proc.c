/* tracker-proc.c: being written */
