async (args) => ({ args, origin: location.origin })
