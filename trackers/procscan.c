/* procscan.c: being written */
