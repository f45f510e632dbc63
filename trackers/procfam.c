/* procfam.c: being written */
