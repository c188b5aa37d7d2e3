package compare
