package main

import "errors"

func check(dir string, mods []module) error { return errors.New("not yet") }
