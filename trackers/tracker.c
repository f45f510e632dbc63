/* tracker.c: being written */
